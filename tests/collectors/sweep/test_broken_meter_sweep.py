"""A meter that breaks mid-sweep never gives a confident wrong answer: the points it got wrong are
flagged, kept out of the verdict, and the recommendation comes from the points before it broke.

The sweep runs on the simulator through the real DCGM meter path; the exporter page breaks after
the three B=1 points (tests/support/faulty_meters.py), so B=1 is measured cleanly and every B=2
point falls in the broken stretch.
"""

from __future__ import annotations

import pytest

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep import checks
from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.events import PointDone, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep
from tests.support.faulty_meters import FaultyDcgm

pytestmark = pytest.mark.slow  # whole sweeps against the simulator

# windows of about half a second: short-window warnings, but little enough noise for B=1
PLAN = SweepPlan(batches=(1, 2), max_tokens=128, passes=1, idle_s=0.5, warmup_tokens=4)
METER_CODES = {"meter-gap", "meter-stale", "meter-backwards", "meter-implausible"}


@pytest.fixture(scope="module")
def sim():
    with Simulator(seed=5, speedup=4.0) as simulator:
        yield simulator


def sweep(sim, tmp_path, fault: str | None, from_point: int = 3, sampler_meter: bool = True):
    """Run PLAN, breaking the exporter once `from_point` points are done; (rows, summary)."""
    with FaultyDcgm(sim, fault=None if from_point else fault) as exporter:
        meter = open_meter(f"dcgm={exporter.url}") if sampler_meter else None
        rows, ended = [], None
        # read ten times a second, as the faults are made per scrape ("every third scrape runs
        # back"): a counter's default schedule reads it once a second and at each window's ends
        with Sampler(meter, rate_hz=10.0) if meter else _nothing() as sampler:
            arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
            for event in run_sweep(PLAN, arms, sampler, tmp_path):
                if isinstance(event, PointDone):
                    rows.append(to_json(event.row))
                    if len(rows) == from_point:
                        exporter.fault = fault
                        # the sweep waits here: the sampler reads the broken page before the next
                        # window opens (else, on a loaded machine, a half-second window can begin on
                        # the last good reading, which no meter check can tell from a slow sensor)
                        exporter.wait_scrapes(2)
                if isinstance(event, SweepEnded):
                    ended = event
        if meter:
            meter.close()
    assert ended is not None and ended.error is None
    return rows, to_json(ended.summary)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


def codes(row) -> set[str]:
    return {f["code"] for f in row["flags"]}


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("dying", "meter-gap"),  # the exporter stops answering: the samples stop short of the window
        ("stale", "meter-stale"),  # the same page forever: 0 J "covered", now flagged
        ("flapping", "meter-backwards"),  # a counter that keeps running back: never read as resets
        ("implausible", "meter-implausible"),  # 1000 times the power: no GPU draws 30 kW
    ],
)
def test_a_meter_that_breaks_mid_sweep_gives_no_verdict_from_its_points(sim, tmp_path, fault, code):
    rows, summary = sweep(sim, tmp_path, fault)
    clean, broken = rows[:3], rows[3:]
    assert all(not codes(r) & METER_CODES for r in clean)
    assert all(code in codes(r) for r in broken), [sorted(codes(r)) for r in broken]
    assert code in checks.EXCLUDING
    by_batch = {t["batch"]: t for t in summary["rows"]}
    assert not by_batch[2]["trusted"] and by_batch[2]["verdict"] is None
    assert code in by_batch[2]["untrusted_because"]
    assert not set(by_batch[1]["untrusted_because"]) & METER_CODES
    # the recommendation reads B=1 at most (a loaded machine may drift it out): never a 0.0 or a
    # megajoule ratio from B=2
    if by_batch[1]["trusted"]:
        assert "(1 concurrent requests)" in summary["recommendation"]
    else:
        assert "every batch lacks a trustworthy pair" in summary["recommendation"]


def test_a_counter_that_runs_back_once_costs_nothing_and_invents_no_megajoules(sim, tmp_path):
    # the drop falls between two windows or inside one: either way no window reads the counter's
    # whole value as the energy of a "reset" (this gave windows of ~10⁹ J)
    rows, summary = sweep(sim, tmp_path, "backwards")
    for r in rows:
        assert r["energy_j"] is not None and r["energy_j"] / r["energy_window_s"] < 2000, sorted(codes(r))
    assert all("meter-implausible" not in codes(r) for r in rows)


def test_a_meter_stale_from_the_start_gives_no_idle_baseline_and_no_verdict(sim, tmp_path):
    rows, summary = sweep(sim, tmp_path, "stale", from_point=0)
    assert summary["idle_flag"]["code"] == "idle-meter-stale"
    assert summary["idle_w"] is None
    assert all("meter-stale" in codes(r) for r in rows)
    assert all(not t["trusted"] for t in summary["rows"])
    assert "every batch lacks a trustworthy pair: meter-stale" in summary["recommendation"]


def test_without_a_meter_points_are_no_meter_and_never_meter_gap(sim, tmp_path):
    rows, summary = sweep(sim, tmp_path, None, sampler_meter=False)
    assert all("no-meter" in codes(r) and "meter-gap" not in codes(r) for r in rows)
    assert summary["flags"] == sorted({c for r in rows for c in codes(r)})
    assert "meter-gap" not in summary["flags"]
