"""The exporter past one server: a meter shared by two servers, the verdict against a sweep, S_j,
and a sweep's table as a node_exporter textfile. Truths are worked by hand from the inputs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from collectors.errors import SpectopError
from collectors.export.exporter import SpectopExporter
from collectors.export.series import SERIES
from collectors.meters import MeterInfo, MeterReading
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.summary import summary_of
from collectors.sweep.textfile import SweepSeries, started_unix_s, write_textfile
from tests.support import server_latency
from tests.support.sweep_rows import as_point, note25_rows, points
from tests.support.tune_runs import schedule_of

METER = MeterInfo("dcgm", ("gpu0",), "GPU board", "counter", 0.1)


class ConstantSampler:
    """A meter drawing `power_w` steadily, read every 0.1 s from t = 0 to `until_s`."""

    reads_on_marks = False  # its readings are given: nothing to read at a poll

    def __init__(self, power_w: float, until_s: float) -> None:
        self.meter = type("Meter", (), {"info": METER})()
        steps = round(until_s * 10)
        self._readings = [MeterReading(t / 10, power_w * t / 10, power_w) for t in range(steps + 1)]

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        return [r for r in self._readings if since_t_s is None or r.t_s > since_t_s]


def snapshots(url: str, tokens_per_s: int, **extra) -> list[ServerSnapshot]:
    """One poll a second from t = 1 to 10, each window 1 s long with `tokens_per_s` tokens."""
    return [
        ServerSnapshot(
            url=url,
            backend="llama.cpp",
            taken_at_s=float(t),
            status="ok",
            model="qwen",
            window_s=1.0,
            window_tokens=tokens_per_s,
            live_tok_s=float(tokens_per_s),
            **extra,
        )
        for t in range(1, 11)
    ]


def page(*collectors) -> dict[str, list[tuple[dict, float]]]:
    registry = CollectorRegistry()
    for c in collectors:
        registry.register(c)
    out: dict[str, list[tuple[dict, float]]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def by_server(samples: list[tuple[dict, float]]) -> dict[str, float]:
    return {labels["server"]: value for labels, value in samples}


def feed(exporter: SpectopExporter, index: int, polls: list[ServerSnapshot]) -> None:
    for snap in polls:
        exporter.update(snap, index)


def test_a_meter_under_two_servers_is_split_by_tokens():
    # 40 W for 10 s = 400 J; server a made 300 tok/s, server b 100 tok/s: 4000 tokens in all,
    # so each token costs 400 J / 4000 = 100 mJ whichever server made it
    meter = ConstantSampler(40.0, 10.0)
    exporter = SpectopExporter(None, meter, energy_window_s=30.0)
    exporter.add_server(None, meter)
    feed(exporter, 0, snapshots("http://a", 300))
    feed(exporter, 1, snapshots("http://b", 100))
    metrics = page(exporter)
    mj = by_server(metrics["spectop_mj_per_token"])
    assert mj == {"http://a": pytest.approx(100.0), "http://b": pytest.approx(100.0)}
    assert {labels["energy"] for labels, _ in metrics["spectop_mj_per_token"]} == {"shared"}
    # the parts add up to the meter's joules: 3000 x 100 mJ + 1000 x 100 mJ = 400 J
    assert (3000 * mj["http://a"] + 1000 * mj["http://b"]) / 1000 == pytest.approx(400.0)


def test_servers_with_their_own_meters_are_not_split():
    exporter = SpectopExporter(None, ConstantSampler(40.0, 10.0))
    exporter.add_server(None, ConstantSampler(20.0, 10.0))
    feed(exporter, 0, snapshots("http://a", 300))
    feed(exporter, 1, snapshots("http://b", 100))
    metrics = page(exporter)
    # a: 400 J / 3000 tokens = 133.3 mJ; b: 200 J / 1000 tokens = 200 mJ
    assert by_server(metrics["spectop_mj_per_token"]) == {
        "http://a": pytest.approx(400_000 / 3000),
        "http://b": pytest.approx(200.0),
    }
    assert {labels["energy"] for labels, _ in metrics["spectop_up"]} == {"own"}
    assert len(metrics["spectop_up"]) == 2  # one family, a sample per server


def test_live_drafting_is_read_against_the_sweeps_plain_curve():
    summary = summary_of(points(note25_rows()))
    # note 25's plain arm at 2 requests: 39.1 W / 100.2 tok/s = 390.22 mJ/token; live drafting here
    # at 2 requests: 35 W / 125 tok/s = 280 mJ/token, so the ratio is 280 / 390.22 = 0.7175
    exporter = SpectopExporter(None, ConstantSampler(35.0, 10.0), summary=summary)
    feed(
        exporter,
        0,
        snapshots("http://d", 125, drafting=True, spec_types="draft-simple", busy_slots_per_decode=2.0),
    )
    labels, ratio = page(exporter)["spectop_draft_energy_ratio"][0]
    assert labels["source"] == "live" and labels["draft"] == "draft-simple" and labels["model"] == "qwen"
    assert ratio == pytest.approx(280 / (39.1 / 100.2 * 1000), rel=1e-3)


def test_a_server_that_does_not_draft_is_told_what_drafting_would_do():
    summary = summary_of(points(note25_rows()))
    exporter = SpectopExporter(None, ConstantSampler(35.0, 10.0), summary=summary)
    feed(exporter, 0, snapshots("http://p", 100, drafting=False, busy_slots_per_decode=4.0))
    labels, ratio = page(exporter)["spectop_draft_energy_ratio"][0]
    # note 25 at 4 requests: (37.1 / 163.4) / (39.0 / 192.3) = 1.1195
    assert labels["source"] == "sweep" and labels["draft"] == "none"
    assert ratio == pytest.approx((37.1 / 163.4) / (39.0 / 192.3), rel=1e-3)


def test_survival_is_served_per_position():
    # 10 polls of 10 steps: per poll 8 steps reached position 1, 4 reached position 2, 1 position 3
    polls = snapshots(
        "http://d", 50, drafting=True, window_steps=10, window_drafted=30, window_accepted=13,
        window_per_position=(8, 4, 1),
    )  # fmt: skip
    exporter = SpectopExporter(None, None)
    feed(exporter, 0, polls)
    survival = {labels["position"]: v for labels, v in page(exporter)["spectop_survival_ratio"]}
    assert survival == {"1": pytest.approx(0.8), "2": pytest.approx(0.4), "3": pytest.approx(0.1)}


def test_every_documented_series_is_served_for_a_drafting_server_with_a_sweep():
    exporter = SpectopExporter(None, ConstantSampler(35.0, 10.0), summary=summary_of(points(note25_rows())))
    exporter.attach_schedule(schedule_of({1: 3, 2: 3, 4: 0}))  # K 3 at 2: what the server says it runs
    polls = snapshots(
        "http://d", 125, drafting=True, spec_types="draft-simple", busy_slots_per_decode=2.0,
        slots_total=4, slots_busy=2, window_steps=50, window_drafted=150, window_accepted=70,
        window_per_position=(40, 20, 10), kv_cache_usage=0.5, waiting_by_reason=(("capacity", 1),),
        engine_sleeping=False, spec_num_steps=3,
    )  # fmt: skip
    idle = [  # two idle seconds first: 20 readings with nothing running give the idle baseline
        ServerSnapshot(url="http://d", backend="llama.cpp", taken_at_s=t, status="ok", window_s=1.0,
                       window_tokens=0, slots_busy=0)
        for t in (0.5, 1.0)
    ]  # fmt: skip
    polls = [replace(p, latency_counters=server_latency.BEFORE) for p in polls[:-1]]
    polls.append(replace(polls[-1], taken_at_s=10.0, latency_counters=server_latency.AFTER))
    feed(exporter, 0, idle + polls[1:])
    served = {name.removesuffix("_total") for name in page(exporter)}
    assert set(SERIES) <= served


def test_a_sweep_becomes_textfile_series(tmp_path):
    summary = summary_of(points(note25_rows()))
    path = tmp_path / "spectop_sweep.prom"
    write_textfile(summary, path, "20261130T180525Z")
    metrics: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(path.read_text()):
        for s in family.samples:
            metrics.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    mj = metrics["spectop_sweep_mj_per_token"]
    assert mj[(("arm", "plain"), ("batch", "2"), ("run", "20261130T180525Z"))] == pytest.approx(
        39.1 / 100.2 * 1000, rel=1e-3
    )
    # the crossover by hand: ratios 0.7147 at 2 and 1.1195 at 4 requests; linear in log2 B, the
    # ratio reaches 1.0 at log2 B = 1 + (1.0 - 0.7147) / (1.1195 - 0.7147), B = 3.26, and the
    # band's edges 0.95 and 1.05 at B = 3.00 and 3.55
    r2 = (35.0 / 125.5) / (39.1 / 100.2)
    r4 = (37.1 / 163.4) / (39.0 / 192.3)

    def through(level: float) -> float:
        return float(2 ** (1 + (level - r2) / (r4 - r2)))

    (value,) = metrics["spectop_sweep_crossover_batch"].values()
    assert value == pytest.approx(through(1.0), abs=0.01) == pytest.approx(3.26, abs=0.01)
    band = metrics["spectop_sweep_crossover_band_batch"]
    assert band[(("edge", "low"), ("run", "20261130T180525Z"))] == pytest.approx(through(0.95), abs=0.01)
    assert band[(("edge", "high"), ("run", "20261130T180525Z"))] == pytest.approx(through(1.05), abs=0.01)
    assert through(0.95) == pytest.approx(3.00, abs=0.01) and through(1.05) == pytest.approx(3.55, abs=0.01)
    assert len(metrics["spectop_sweep_energy_ratio"]) == 5  # every batch of note 25 is a trusted pair


def test_the_textfile_must_be_one_the_collector_reads(tmp_path):
    with pytest.raises(SpectopError, match=r"\.prom"):
        write_textfile(summary_of(points(note25_rows())), tmp_path / "sweep.txt")
    with pytest.raises(SpectopError, match="cannot write"):
        write_textfile(summary_of(points(note25_rows())), tmp_path / "missing" / "sweep.prom")


def test_a_runs_start_comes_from_its_folder_name():
    assert started_unix_s("20261130T180525Z") == 1796061925.0
    assert started_unix_s("20261130T180525Z-1") == 1796061925.0
    assert started_unix_s("my-sweep") is None
    assert started_unix_s("19700101T000000Z") == 0.0


def test_the_sweep_series_sit_beside_the_live_ones():
    summary = summary_of(points(note25_rows()))
    metrics = page(SpectopExporter(None, None), SweepSeries(summary, "r"))
    assert "spectop_up" in metrics and "spectop_sweep_crossover_batch" in metrics


@pytest.mark.slow
def test_two_servers_one_meter_from_the_command_line(tmp_path):
    """`spectop export` with two simulated servers under one DCGM meter and a saved sweep."""
    import subprocess
    import sys
    import time

    import httpx

    from collectors.launch.process import free_port
    from collectors.simulator import Simulator
    from collectors.simulator.traffic import Phase, TrafficGenerator
    from collectors.sweep.store import RunStore
    from tests.support.processes import reaped

    run_dir = tmp_path / "20261130T180525Z"
    run_dir.mkdir()
    store = RunStore(run_dir)
    store.write_meta({"planned_points": 15})
    for row in note25_rows():
        store.append_point(as_point(row))
    port = free_port()
    with Simulator(seed=5, speedup=4.0) as sim:
        plain_url, draft_url = sim.plain_url, sim.draft_url
        args = ["export", "--server", plain_url, "--server", draft_url]
        args += ["--meter", f"dcgm={sim.meter_url}/metrics?period=0.1", "--listen", f"127.0.0.1:{port}"]
        args += ["--interval", "0.25", "--window", "10", "--sweep", str(run_dir)]
        popen = subprocess.Popen(
            [sys.executable, "-m", "tui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        with reaped(popen) as proc:
            with (
                TrafficGenerator({"draft": draft_url}, [Phase("draft", 2, 60.0)], n_tokens=64),
                TrafficGenerator({"plain": plain_url}, [Phase("plain", 1, 60.0)], n_tokens=64),
            ):
                deadline = time.monotonic() + 60
                metrics: dict = {}
                while time.monotonic() < deadline:
                    time.sleep(0.5)
                    try:
                        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
                    except httpx.TransportError:
                        continue
                    metrics = {}
                    for family in text_string_to_metric_families(text):
                        for s in family.samples:
                            metrics.setdefault(s.name, []).append((s.labels, s.value))
                    if len(metrics.get("spectop_mj_per_token", [])) == 2:
                        break
            proc.terminate()
    assert by_server(metrics["spectop_up"]) == {plain_url: 1.0, draft_url: 1.0}
    assert {labels["energy"] for labels, _ in metrics["spectop_mj_per_token"]} == {"shared"}
    assert {labels["run"] for labels, _ in metrics["spectop_sweep_crossover_batch"]} == {run_dir.name}


def test_meters_must_be_one_or_one_per_server(capsys):
    from tui.cli import main

    args = ["export", "--server", "http://127.0.0.1:9", "--server", "http://127.0.0.1:10"]
    args += ["--meter", "none", "--meter", "none", "--meter", "none"]
    assert main(args) == 2
    assert "3 --meter for 2 --server" in capsys.readouterr().err


def test_engine_state_is_served_per_reason():
    polls = snapshots(
        "http://d", 50, kv_cache_usage=0.375, waiting_by_reason=(("capacity", 5), ("deferred", 1)),
        engine_sleeping=True,
    )  # fmt: skip
    exporter = SpectopExporter(None, None)
    feed(exporter, 0, polls)
    served = page(exporter)
    waiting = {labels["reason"]: v for labels, v in served["spectop_requests_waiting"]}
    assert waiting == {"capacity": 5.0, "deferred": 1.0}
    assert [v for _, v in served["spectop_engine_sleeping"]] == [1.0]
    assert [v for _, v in served["spectop_kv_cache_usage_ratio"]] == [0.375]
    assert "spectop_speculative_steps" not in served  # unknown is not served


@pytest.mark.slow
def test_report_writes_a_saved_sweep_as_a_textfile(tmp_path):
    from collectors.sweep.store import RunStore
    from tests.support.cli_runs import spectop

    run_dir = tmp_path / "20261130T180525Z"
    run_dir.mkdir()
    store = RunStore(run_dir)
    store.write_meta({"planned_points": 15})
    for row in note25_rows():
        store.append_point(as_point(row))
    prom = tmp_path / "spectop_sweep.prom"
    result = spectop("report", str(run_dir), "--format", "json", "--textfile", str(prom))
    assert result.returncode == 0, result.stderr
    families = {f.name: f for f in text_string_to_metric_families(prom.read_text())}
    (started,) = families["spectop_sweep_started_seconds"].samples
    assert started.value == 1796061925.0 and started.labels == {"run": run_dir.name}
    ratios = {s.labels["batch"]: s.value for s in families["spectop_sweep_energy_ratio"].samples}
    assert ratios["4"] == pytest.approx((37.1 / 163.4) / (39.0 / 192.3), rel=1e-3)
    bad = spectop("report", str(run_dir), "--textfile", str(tmp_path / "sweep.txt"))
    assert bad.returncode == 2 and ".prom" in bad.stderr


def test_a_waiting_reason_with_terminal_escapes_is_served_printable():
    reason = "capacity\x1b]0;PWNED-TITLE\x07"
    polls = snapshots("http://d", 50, waiting_by_reason=((reason, 2),))
    exporter = SpectopExporter(None, None)
    feed(exporter, 0, polls)
    registry = CollectorRegistry()
    registry.register(exporter)
    text = generate_latest(registry).decode()
    assert "\x1b" not in text and "\x07" not in text
    [(labels, value)] = page(exporter)["spectop_requests_waiting"]
    assert labels["reason"] == "capacity\\x1b]0;PWNED-TITLE\\x07" and value == 2.0


def test_a_window_below_the_idle_baseline_serves_no_net_figure():
    exporter = SpectopExporter(None, ConstantSampler(5.0, 11.0))
    exporter.feeds[0].live.known_idle_w = 10.0  # measured while the machine drew more
    feed(exporter, 0, snapshots("http://d", 100))
    served = page(exporter)
    assert [v for _, v in served["spectop_mj_per_token"]] == [pytest.approx(50.0)]
    assert "spectop_net_mj_per_token" not in served  # never a negative energy


def test_the_servers_own_latency_cache_and_finish_reasons_are_served():
    """Bucket deltas between the window's first and last poll (tests/support/server_latency.py's
    hand-worked figures), not the lifetime buckets."""
    polls = snapshots("http://v", 100, drafting=False)
    polls = [replace(p, latency_counters=server_latency.BEFORE) for p in polls[:-1]] + [
        replace(polls[-1], latency_counters=server_latency.AFTER)
    ]
    exporter = SpectopExporter(None, None)
    feed(exporter, 0, polls)
    scraped = page(exporter)
    ttft = {
        labels["quantile"]: value
        for labels, value in scraped["spectop_server_latency_ms"]
        if labels["kind"] == "ttft"
    }
    assert ttft == {q: pytest.approx(ms) for q, ms in server_latency.TTFT_MS.items()}
    assert by_server(scraped["spectop_server_prefix_cache_hit_ratio"]) == {"http://v": pytest.approx(0.5)}
    finished = {labels["reason"]: v for labels, v in scraped["spectop_server_finished_requests"]}
    assert finished == {"stop": 4.0}


def test_verify_steps_by_tokens_accepted_and_tokens_per_joule():
    # 10 polls of 10 steps, per poll 8 reached position 1, 4 position 2, 1 position 3: S = 0.8, 0.4,
    # 0.1, so 20 % of steps accepted none, 40 % one, 30 % two, 10 % three (their sum is 1)
    polls = snapshots(
        "http://d", 50, drafting=True, window_steps=10, window_drafted=30, window_accepted=13,
        window_per_position=(8, 4, 1),
    )  # fmt: skip
    # 35 W over 50 tokens a second: 700 mJ/token, so 1000 / 700 = 1.4286 tokens per joule
    exporter = SpectopExporter(None, ConstantSampler(35.0, 10.0))
    feed(exporter, 0, polls)
    served = page(exporter)
    shares = {labels["accepted"]: v for labels, v in served["spectop_verify_steps_accepted_ratio"]}
    assert shares == {
        "0": pytest.approx(0.2), "1": pytest.approx(0.4), "2": pytest.approx(0.3), "3": pytest.approx(0.1)
    }  # fmt: skip
    ((_, mj),) = served["spectop_mj_per_token"]
    ((_, per_joule),) = served["spectop_tokens_per_joule"]
    assert mj == pytest.approx(700.0, rel=1e-3) and per_joule == pytest.approx(1000 / 700, rel=1e-3)
