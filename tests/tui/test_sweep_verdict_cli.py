"""What `spectop sweep` and `spectop report` print when the usual energy verdict cannot be given:
a sweep without a meter (a speed-only verdict), a meter that is an estimate (said once, with what
to use instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.simulator import Simulator
from collectors.sweep.store import RunStore
from tests.support.sweep_rows import as_point, note25_rows
from tui.cli import main


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
