"""The sweep reproduces note 25's table against the simulator, read through the real DCGM meter path."""

from __future__ import annotations

import pytest

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import SweepEnded, run_sweep

SPEEDUP = 4.0  # token rates and power both x4: mJ/token and every ratio are the profile's
# note 25: requests, plain tok/s, draft tok/s, speed, plain mJ/token, draft mJ/token, energy, plain W, draft W
NOTE25 = {
    1: (61.9, 78.3, 1.26, 370, 381, 1.03, 22.9, 29.8),
    2: (100.2, 125.5, 1.25, 391, 279, 0.71, 39.1, 35.0),
    4: (192.3, 163.4, 0.85, 203, 227, 1.12, 39.0, 37.1),
    8: (339.2, 229.8, 0.68, 109, 163, 1.50, 36.9, 37.6),
    16: (377.0, 329.1, 0.87, 95, 114, 1.20, 35.9, 37.5),
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    with Simulator(seed=3, speedup=SPEEDUP) as sim:
        meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
        plan = SweepPlan(batches=(1, 2, 4, 8, 16), max_tokens=512, passes=1, idle_s=1.0)
        arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
        with Sampler(meter) as sampler:
            events = list(run_sweep(plan, arms, sampler, tmp_path_factory.mktemp("results")))
        meter.close()
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    return ended.summary


def test_every_cell_within_five_percent(swept):
    for t in swept["rows"]:
        p_tok, d_tok, speed, p_mj, d_mj, ratio, p_w, d_w = NOTE25[t["batch"]]
        measured = (
            t["plain"]["tok_s"] / SPEEDUP,
            t["draft"]["tok_s"] / SPEEDUP,
            t["speedup"],
            t["plain"]["mj_per_token"],
            t["draft"]["mj_per_token"],
            t["energy_ratio"],
            t["plain"]["power_w"] / SPEEDUP,
            t["draft"]["power_w"] / SPEEDUP,
        )
        for got, want in zip(measured, NOTE25[t["batch"]]):
            assert got == pytest.approx(want, rel=0.05), (t["batch"], measured)
        assert 0.67 <= t["draft"]["acceptance"] <= 0.74


def test_crossover_and_recommendation(swept):
    cross = swept["crossover"]
    assert (cross["below"], cross["above"]) == (2, 4)
    assert swept["recommendation"] == "draft at ≤ 2 concurrent requests, turn it off from 4"
    assert "void" not in swept["flags"] and "output-mismatch" not in swept["flags"]
