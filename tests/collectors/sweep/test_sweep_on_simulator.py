"""The sweep reproduces note 25's table (docs/note25.md) against the simulator, read through the real
DCGM meter path.

What each check allows, and why. The simulator's own noise is small: 1 % (sd) jitter per step on
step time, which averages out over a window's hundreds of steps, and 1 % per load segment on power
(clipped at 3 %). Energy per token and the energy ratio are compared within 5 %: eight runs on a
shared two-core machine (load 1.3-4.3) stayed within 2.7 %. Token rates and watts are compared
within 5 % above and 10 % below: the simulated server, the client and the meter share one Python
process, and on a busy machine the server admits and streams late (first tokens 60-210 ms after
the send at B=16, against one 10 ms step when idle), which stretches a window by a fixed 0.1-0.4 s
of partial load. A stretch can only lower tok/s and W (the chip draws little through it, so
mJ/token barely moves): the same runs read -7.2 % to +0.1 %. The formulas themselves are held
exactly by the hand-made rows of test_summary.py and test_point_energy.py.

The recommendation is checked against the rule applied to the measured ratios, not as a fixed
sentence: note 25's 1.03 at one request sits 2 % under the break-even band's edge, where the
power noise can put it on either side.
"""

from __future__ import annotations

import pytest

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.events import SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep

SPEEDUP = 4.0  # token rates and power both x4: mJ/token and every ratio are the profile's
# note 25: requests, plain tok/s, draft tok/s, plain mJ/token, draft mJ/token, energy, plain W, draft W
NOTE25 = {
    1: (61.9, 78.3, 370, 381, 1.03, 22.9, 29.8),
    2: (100.2, 125.5, 391, 279, 0.71, 39.1, 35.0),
    4: (192.3, 163.4, 203, 227, 1.12, 39.0, 37.1),
    8: (339.2, 229.8, 109, 163, 1.50, 36.9, 37.6),
    16: (377.0, 329.1, 95, 114, 1.20, 35.9, 37.5),
}
ENERGY_TOLERANCE = 0.05
RATE_ABOVE, RATE_BELOW = 0.05, 0.10  # a stretched window only lowers tok/s and W


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


def test_energy_cells_within_five_percent(swept):
    for t in swept["rows"]:
        _, _, p_mj, d_mj, ratio, _, _ = NOTE25[t["batch"]]
        assert t["plain"]["mj_per_token"] == pytest.approx(p_mj, rel=ENERGY_TOLERANCE), t["batch"]
        assert t["draft"]["mj_per_token"] == pytest.approx(d_mj, rel=ENERGY_TOLERANCE), t["batch"]
        assert t["energy_ratio"] == pytest.approx(ratio, rel=ENERGY_TOLERANCE), t["batch"]
        assert 0.67 <= t["draft"]["acceptance"] <= 0.74


def test_rates_and_watts_within_a_window_stretch(swept):
    for t in swept["rows"]:
        p_tok, d_tok, _, _, _, p_w, d_w = NOTE25[t["batch"]]
        measured = {
            "plain tok/s": (t["plain"]["tok_s"] / SPEEDUP, p_tok),
            "draft tok/s": (t["draft"]["tok_s"] / SPEEDUP, d_tok),
            "plain W": (t["plain"]["power_w"] / SPEEDUP, p_w),
            "draft W": (t["draft"]["power_w"] / SPEEDUP, d_w),
        }
        for name, (got, want) in measured.items():
            assert -RATE_BELOW <= got / want - 1 <= RATE_ABOVE, (t["batch"], name, got, want)
        assert t["speedup"] == pytest.approx(t["draft"]["tok_s"] / t["plain"]["tok_s"])


def test_recommendation_and_crossover_follow_the_rule_on_the_measured_ratios(swept):
    assert all(t["trusted"] for t in swept["rows"]) and swept["untrusted"] == []
    assert "void" not in swept["flags"] and "output-mismatch" not in swept["flags"]
    ratios = {t["batch"]: t["energy_ratio"] for t in swept["rows"]}
    # far from the band (0.95-1.05) in note 25, so on the same side whatever the noise
    assert ratios[2] < 0.95 and all(ratios[b] > 1.05 for b in (4, 8, 16))
    if ratios[1] <= 1.05:  # note 25's 1.03: break-even, worth drafting
        want, bracket = "draft at ≤ 2 concurrent requests, turn it off from 4", (2, 4)
    else:
        want = (
            "drafting pays at 2 and costs at 1, 4, 8, 16 concurrent requests: "
            "no clean crossover, re-run with more passes"
        )
        bracket = None
    assert swept["recommendation"] == want
    cross = swept["crossover"]
    assert (cross and (cross["below"], cross["above"])) == (bracket or None)
    if cross:
        # where the ratio rises through 1.05 between the measured 2 and 4, in log B
        r2, r4 = ratios[2], ratios[4]
        assert cross["batch"] == pytest.approx(2 * 2 ** ((1.05 - r2) / (r4 - r2)), abs=0.01)
