"""What `spectop sweep` and `spectop report` print when the usual energy verdict cannot be given:
a sweep without a meter (a speed-only verdict), a meter that is an estimate (said once, with what
to use instead), an arm whose server is down (found before anything is measured, named by the
option that gives it), and a multi-arm sweep's untrusted batches (each named once)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.launch.process import free_port
from collectors.simulator import Simulator
from collectors.sweep.events import SweepEnded
from collectors.sweep.store import RunStore
from collectors.sweep.summary import summary_of
from tests.support.cli_runs import one_line
from tests.support.sweep_rows import as_point, note25_rows, points, row, run_meta
from tui.cli import main
from tui.commands._sweep_finish import UNTRUSTED, finish


@pytest.fixture(scope="module")
def sim():
    with Simulator(seed=5, speedup=8.0) as simulator:
        yield simulator


def test_report_without_a_meter_gives_the_speed_verdict_with_the_speed_ups_used(tmp_path, capsys):
    store = RunStore(tmp_path)
    for r in note25_rows():  # as a sweep with --meter none saves them: no energy, flagged no-meter
        r.update(energy_j=None, energy_covered=False)
        r["flags"] = [{"code": "no-meter", "message": "no power meter: energy not measured"}]
        store.append_point(as_point(r))
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    said = " ".join(out.split())
    # speed-ups by hand: 78.3 / 61.9 = 1.26 and 125.5 / 100.2 = 1.25 above 1.05, 163.4 / 192.3 =
    # 0.85, 229.8 / 339.2 = 0.68 and 329.1 / 377.0 = 0.87 below 0.95
    assert (
        "Recommendation: energy not measured (no meter); by speed alone, drafting is faster at 1, 2 "
        "and slower at 4, 8, 16 concurrent requests: measure energy with a meter to judge it."
    ) in said
    assert "nothing to recommend" not in said and "No trustworthy pair" not in said
    assert "Energy not measured at B=1, 2, 4, 8, 16 (no meter)" in said
    assert " 1.26x " in out and "(1.26x)" not in out


def sweep_args(sim, results: Path, meter: str, *extra: str) -> list[str]:
    return [
        *["sweep", "--plain", sim.plain_url, "--draft", sim.draft_url, "--batches", "1,2"],
        *["--tokens", "32", "--passes", "1", "--idle", "0.2", "--meter", meter, "--results", str(results)],
        *extra,
    ]


@pytest.mark.slow
def test_the_estimate_is_said_once_with_what_to_use_instead(sim, tmp_path, capsys):
    main(sweep_args(sim, tmp_path, "estimate"))
    out = capsys.readouterr().out
    said = " ".join(out.split())
    # six points (two batches, plain before and after draft), the warning under the first only
    assert out.count("B=") >= 6
    assert said.count("energy is a CPU-load estimate") == 1
    assert "measure it with --meter rapl" in said and "--meter dcgm=URL or --meter node=URL" in said


def test_a_draft_server_that_is_down_stops_the_sweep_before_plain_is_measured(sim, tmp_path, capsys):
    down = f"http://127.0.0.1:{free_port()}"
    args = [*sweep_args(sim, tmp_path, "none"), "--draft", down]  # the last --draft counts
    assert main(args) == 1
    err = one_line(capsys.readouterr().err)
    assert f"cannot reach {down}" in err and "pass --draft with the right host and port" in err
    assert "--server" not in err
    (run_dir,) = tmp_path.iterdir()
    assert not (run_dir / "points.jsonl").exists()  # not one point measured, plain's neither


def test_a_draft_command_whose_program_is_missing_stops_the_sweep_before_plain_is_measured(
    sim, tmp_path, capsys
):
    missing = "no-such-llm-server-program"
    draft_cmd = f"{missing} -m target.gguf -md draft.gguf --spec-type draft-simple --port {free_port()}"
    args = [*sweep_args(sim, tmp_path, "none")]
    args[args.index("--draft") : args.index("--draft") + 2] = ["--draft-cmd", draft_cmd]
    assert main(args) == 1
    err = one_line(capsys.readouterr().err)
    assert f"the draft arm's program '{missing}' was not found" in err
    (run_dir,) = tmp_path.iterdir()
    assert not (run_dir / "points.jsonl").exists()  # plain, a running server, was not measured


def test_a_multi_arm_sweep_names_each_untrusted_batch_once(tmp_path, capsys):
    # two arms besides plain at batches 1 and 2, every point flagged meter-gap: four untrusted
    # entries per batch (one per arm), but the line names batches 1 and 2
    rows = [
        {**row(b, arm, 50.0, 30.0, phase=phase, flags=("meter-gap",)), "prompt_class": "code"}
        for b in (1, 2)
        for arm, phase in (("plain", "before"), ("draft-4", ""), ("draft-8", ""), ("plain", "after"))
    ]
    summary = summary_of(points(rows), run_meta({"schema": "spectop.run-arms/1"}))
    assert [u.batch for u in summary.untrusted].count(1) >= 2
    code = finish(SweepEnded(tmp_path, summary, False, None), None, True, None)
    assert code == UNTRUSTED
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"]["schema"] == "spectop.summary-arms/1"
    assert one_line(captured.err).startswith("spectop: no trustworthy pair at B=1, 2: ")
