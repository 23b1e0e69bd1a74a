"""`spectop sweep` as scripts see it: the exit code says whether the result can be trusted, and
SIGTERM/SIGHUP end it with the summary written, as Ctrl-C does (exit codes in tui/commands/sweep.py).

The arms are the simulator's, in this process; spectop runs as a subprocess.
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from collectors.simulator import Simulator
from collectors.sweep.store import load_run
from tests.support.cli_runs import one_line, spectop, spectop_popen
from tests.support.faulty_meters import FaultyDcgm
from tests.support.processes import reaped

pytestmark = pytest.mark.slow  # headless sweeps in a subprocess against the simulator


@pytest.fixture(scope="module")
def sim():
    with Simulator(seed=4, speedup=8.0) as simulator:
        yield simulator


def sweep(sim, results: Path, meter: str, *extra: str) -> list[str]:
    return [
        *["sweep", "--plain", sim.plain_url, "--draft", sim.draft_url, "--batches", "1,2"],
        *["--tokens", "64", "--passes", "1", "--idle", "0.3", "--meter", meter, "--results", str(results)],
        *extra,
    ]


def test_a_stale_meter_gives_exit_3_and_names_the_untrusted_batches(sim, tmp_path):
    with FaultyDcgm(sim, fault="stale") as exporter:
        proc = spectop(*sweep(sim, tmp_path, f"dcgm={exporter.url}", "--json"))
    assert proc.returncode == 3
    line = one_line(proc.stderr)
    assert line.startswith("spectop: no trustworthy pair at B=1, 2: the result cannot be trusted there")
    body = json.loads(proc.stdout)
    assert body["error"] is None and body["summary"]["crossover"] is None
    assert all("meter-stale" in u["because"] for u in body["summary"]["untrusted"])
    (run_dir,) = tmp_path.iterdir()
    assert len(load_run(run_dir)[1]) == 6 and (run_dir / "summary.json").is_file()


def test_a_flapping_counter_is_flagged_and_invents_no_energy_for_the_verdict(sim, tmp_path):
    with FaultyDcgm(sim, fault="flapping") as exporter:
        proc = spectop(*sweep(sim, tmp_path, f"dcgm={exporter.url}", "--json"))
    assert proc.returncode == 3, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    # the drop reads as a counter going back; where a window holds only the climb back, as a power
    # no chip draws (which one a window sees depends on where its reads fall): flagged either way
    assert {"meter-backwards", "meter-implausible"} & set(summary["flags"]), summary["flags"]
    assert summary["crossover"] is None
    assert all(not t["trusted"] and t["verdict"] is None for t in summary["rows"])


@pytest.mark.parametrize(
    ("fault", "code"),
    [("dying", "meter-gap"), ("stale", "meter-stale"), ("implausible", "meter-implausible")],
)
def test_a_meter_that_breaks_mid_sweep_gives_exit_3_and_no_verdict_from_its_points(
    sim, tmp_path, fault, code
):
    with FaultyDcgm(sim) as exporter:
        with reaped(spectop_popen(*sweep(sim, tmp_path, f"dcgm={exporter.url}"))) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:  # B=1 measured cleanly, then the meter breaks
                if "B=1   plain after" in line:
                    exporter.fault = fault
                    break
            out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    # B=1 may be untrusted too on a loaded machine (its windows are short); B=2 always is
    untrusted = re.match(
        r"spectop: no trustworthy pair at B=([\d, ]+): the result cannot be trusted", one_line(err)
    )
    assert untrusted and "2" in untrusted[1].split(", ")
    (run_dir,) = tmp_path.iterdir()
    _, rows = load_run(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert len(rows) == summary["points"] == 6  # every point on disk, whole
    b2 = next(t for t in summary["rows"] if t["batch"] == 2)
    assert not b2["trusted"] and b2["verdict"] is None and code in b2["untrusted_because"]
    assert "(2 concurrent requests)" not in summary["recommendation"]


def test_without_a_meter_on_purpose_the_sweep_says_so_and_exits_0(sim, tmp_path):
    # `--meter none` asks for speed alone: the missing energy is flagged, but is no failure
    proc = spectop(*sweep(sim, tmp_path, "none", "--json"))
    summary = json.loads(proc.stdout)["summary"]
    assert "no-meter" in summary["flags"] and "meter-gap" not in summary["flags"]
    # plain's drift is checked on speed: windows of a tenth of a second on a loaded machine can
    # drift, and such a batch is a failure of the measurement (exit 3), not of the missing energy
    drifted = [u["batch"] for u in summary["untrusted"] if u["because"] != ["no-meter"]]
    assert all(u["because"] in (["no-meter"], ["no-meter", "plain-drift"]) for u in summary["untrusted"])
    assert proc.returncode == (3 if drifted else 0), proc.stderr
    # the verdict is speed's (or none, where every batch drifted), and says energy was not measured
    assert summary["recommendation"].startswith("energy not measured (no meter)")
    assert "by speed alone" in summary["recommendation"] or len(drifted) == len(summary["rows"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_write_the_summary_of_the_completed_points(sim, tmp_path, sig):
    with reaped(spectop_popen(*sweep(sim, tmp_path, "none", "--batches", "1,2,4,8"))) as proc:
        deadline = time.monotonic() + 60
        for line in proc.stdout:  # the first completed point
            if "B=1   plain before" in line or time.monotonic() > deadline:
                break
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    (run_dir,) = tmp_path.iterdir()
    _, rows = load_run(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert 1 <= len(rows) < 12 and summary["points"] == len(rows)
    if sig == signal.SIGTERM:
        line = one_line(err)
        assert f"sweep stopped by SIGTERM; {len(rows)} completed points saved in {run_dir}" in line
    else:  # the terminal is gone: spectop writes nothing more to it, the files are the output
        assert err == ""


def test_the_demo_meter_url_as_printed_gives_windows_that_are_not_short(tmp_path):
    # `demo --serve-only` prints the page with ?period=; without it the 30 s DCGM default flagged
    # every window short-window
    with Simulator(seed=4, speedup=2.0) as sim:
        proc = spectop(
            *[
                "sweep",
                "--plain",
                sim.plain_url,
                "--draft",
                sim.draft_url,
                "--batches",
                "1",
                "--tokens",
                "160",
            ],
            *["--passes", "1", "--idle", "1.2", "--meter", f"dcgm={sim.meter_page_url}", "--json"],
            *["--results", str(tmp_path)],
        )
    assert proc.returncode in (0, 3), proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert summary["points"] == 3 and "short-window" not in summary["flags"]
    assert summary["idle_flag"] is None
