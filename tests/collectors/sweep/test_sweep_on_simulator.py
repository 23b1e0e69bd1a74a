"""The sweep reproduces note 25's table (collectors/docs/note25.md) against the simulator, read through the real
DCGM meter path.

What a loaded machine does, and how the checks stay clear of it. The simulator keeps its tokens
and joules on its own schedule (collectors/simulator/engine.py), so its figures over the time it
was busy are note 25's within its own noise: 1 % (sd) per step on step time and per load segment
on power, which averages out over a window's hundreds of steps, plus the few steps at a window's
ends where requests admitted a step apart run a smaller batch. But the sweep's window runs from
its first send to the last token it read, in a client that shares one Python process with the
server: on a busy machine it sends and reads late, which stretches the window by idle seconds
(a third of the busy time and more on two loaded cores). A stretch can only lower tok/s and W
and raise mJ/token, so the summary's figures are held to one-sided bounds, and each point's
figures and each batch's energy ratio to note 25 within 5 % once the stretch is taken out: the
simulator's busy seconds over the point (read around its window) replace the window, and the
sweep's own idle baseline times the idle seconds comes off the joules. A late send does one thing
more: the batch's requests reach the server a step or more apart, so for part of its busy time the
simulator runs fewer than B requests, and note 25's figures at B no longer describe what it did.
The simulator counts its request-seconds, so each point knows the mean batch it really ran; a
point is held to note 25 when that is within 2 % of B (always so at one request), and every point,
whatever the load, to its own windows' figures and to never running more than B. The formulas themselves
are held exactly by the hand-made rows of test_summary.py and test_point_energy.py.

The recommendation is checked against the rule applied to the measured ratios, not as a fixed
sentence: note 25's 1.03 at one request sits 2 % under the break-even band's edge, where the
power noise can put it on either side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.events import PointDone, PointProgressed, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep

pytestmark = pytest.mark.slow  # minutes of simulated serving: `-m 'not slow'` leaves it out

SPEEDUP = 4.0  # token rates and power both x4: mJ/token and every ratio are the profile's
# note 25: requests, plain tok/s, draft tok/s, plain mJ/token, draft mJ/token, energy, plain W, draft W
NOTE25 = {
    1: (61.9, 78.3, 370, 381, 1.03, 22.9, 29.8),
    2: (100.2, 125.5, 391, 279, 0.71, 39.1, 35.0),
    4: (192.3, 163.4, 203, 227, 1.12, 39.0, 37.1),
    8: (339.2, 229.8, 109, 163, 1.50, 36.9, 37.6),
    16: (377.0, 329.1, 95, 114, 1.20, 35.9, 37.5),
}
TOLERANCE = 0.05
LOAD_FLAGS = {"concurrency", "plain-drift", "short-window"}  # what a stalled client can cause


@dataclass(frozen=True)
class Point:
    """A point's row and what the simulator did while the sweep measured it."""

    row: dict[str, Any]
    busy_s: float
    request_s: float  # active requests × seconds

    @property
    def mean_batch(self) -> float:
        return self.request_s / self.busy_s

    @property
    def ran_its_batch(self) -> bool:
        """True when the requests ran together: the simulator's mean batch within 2 % of B."""
        return self.mean_batch >= 0.98 * self.row["batch"]

    def busy_figures(self, idle_w: float) -> tuple[float, float, float]:
        """(tok/s, W, mJ/token) over the busy seconds: the idle rest of the window comes off."""
        busy_j = self.row["energy_j"] - idle_w * (self.row["energy_window_s"] - self.busy_s)
        tokens = self.row["committed_tokens"]
        return tokens / self.busy_s, busy_j / self.busy_s, 1000 * busy_j / tokens


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[dict[str, Any], list[Point]]:
    points: list[Point] = []
    with Simulator(seed=3, speedup=SPEEDUP) as sim:
        meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
        plan = SweepPlan(batches=(1, 2, 4, 8, 16), max_tokens=512, passes=1, idle_s=1.0)
        arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
        events = []
        with Sampler(meter) as sampler:
            for event in run_sweep(plan, arms, sampler, tmp_path_factory.mktemp("results")):
                # the generator measures a point's window between these two events
                if isinstance(event, PointProgressed) and event.state == "running":
                    before = sim.accelerator.read()
                elif isinstance(event, PointDone):
                    after = sim.accelerator.read()
                    points.append(
                        Point(
                            to_json(event.row),
                            after.busy_s - before.busy_s,
                            after.request_s - before.request_s,
                        )
                    )
                events.append(event)
        meter.close()
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    return to_json(ended.summary), points


def _note25(batch: int, arm: str) -> tuple[float, float, float]:
    """(tok/s, W, mJ/token) of one arm at one batch."""
    p_tok, d_tok, p_mj, d_mj, _, p_w, d_w = NOTE25[batch]
    return (p_tok, p_w, p_mj) if arm == "plain" else (d_tok, d_w, d_mj)


def test_every_point_within_five_percent_once_the_stretch_is_out(swept):
    summary, points = swept
    idle_w = summary["idle_w"]
    assert idle_w == pytest.approx(3.0 * SPEEDUP, rel=TOLERANCE)
    for p in points:
        batch, arm = p.row["batch"], p.row["arm"]
        row = p.row
        assert p.busy_s <= row["window_s"] and p.busy_s <= row["energy_window_s"]  # they hold the work
        # the point's own figures over its own windows (the ones the table and files show)
        assert row["tok_s"] == pytest.approx(row["committed_tokens"] / row["window_s"])
        assert row["power_w"] == pytest.approx(row["energy_j"] / row["energy_window_s"])
        assert row["mj_per_token"] == pytest.approx(1000 * row["energy_j"] / row["committed_tokens"])
        assert p.mean_batch <= batch * (1 + 1e-9)  # the sweep never runs more than its batch
        if not p.ran_its_batch:  # sent a step or more apart on a loaded machine: not note 25's batch
            continue
        tok_s, power_w, mj = p.busy_figures(idle_w)
        want_tok_s, want_w, want_mj = _note25(batch, arm)
        assert tok_s / SPEEDUP == pytest.approx(want_tok_s, rel=TOLERANCE), (batch, arm, "tok/s")
        assert power_w / SPEEDUP == pytest.approx(want_w, rel=TOLERANCE), (batch, arm, "W")
        assert mj == pytest.approx(want_mj, rel=TOLERANCE), (batch, arm, "mJ/token")
    assert all(p.ran_its_batch for p in points if p.row["batch"] == 1)
    for batch, (*_, ratio, _, _) in NOTE25.items():
        if not all(p.ran_its_batch for p in points if p.row["batch"] == batch):
            continue

        def busy_mj(arm: str, batch: int = batch) -> float:
            mine = [p for p in points if (p.row["batch"], p.row["arm"]) == (batch, arm)]
            joules = sum(p.busy_figures(idle_w)[2] * p.row["committed_tokens"] for p in mine)
            return joules / sum(p.row["committed_tokens"] for p in mine)

        assert busy_mj("draft") / busy_mj("plain") == pytest.approx(ratio, rel=TOLERANCE), batch


def test_the_summary_moves_each_figure_one_way_only(swept):
    summary, _ = swept
    for t in summary["rows"]:
        for arm in ("plain", "draft"):
            tok_s, power_w, mj = _note25(t["batch"], arm)
            a = t[arm]
            assert a["tok_s"] / SPEEDUP <= tok_s * (1 + TOLERANCE), (t["batch"], arm)
            assert a["power_w"] / SPEEDUP <= power_w * (1 + TOLERANCE), (t["batch"], arm)
            assert a["mj_per_token"] >= mj * (1 - TOLERANCE), (t["batch"], arm)
        assert 0.67 <= t["draft"]["acceptance"] <= 0.74
        assert t["speedup"] == pytest.approx(t["draft"]["tok_s"] / t["plain"]["tok_s"])


def test_recommendation_and_crossover_follow_the_rule_on_the_measured_ratios(swept):
    swept, _ = swept
    assert "void" not in swept["flags"] and "output-mismatch" not in swept["flags"]
    ratios = {t["batch"]: t["energy_ratio"] for t in swept["rows"]}
    trusted = {t["batch"] for t in swept["rows"] if t["trusted"]}
    # far from the band (0.95-1.05) in note 25, so on the same side whatever the noise
    assert all(ratios[b] < 0.95 for b in {2} & trusted) and all(
        ratios[b] > 1.05 for b in {4, 8, 16} & trusted
    )
    if trusted != set(NOTE25):
        # a loaded machine can send a batch's requests late enough that the server ran fewer at
        # once, or plain drift between its two runs: such a batch is left out, for that reason only
        for t in swept["rows"]:
            assert t["trusted"] or set(t["untrusted_because"]) <= LOAD_FLAGS, t["untrusted_because"]
        assert {u["batch"] for u in swept["untrusted"]} == set(NOTE25) - trusted
        return
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
        # where the ratio rises through 1.0 between the measured 2 (below 0.95) and 4, in log B, and
        # through the band's edges 0.95 and 1.05 around it
        r2, r4 = ratios[2], ratios[4]
        for key, level in (("batch_at_1", 1.0), ("band_low", 0.95), ("band_high", 1.05)):
            assert cross[key] == pytest.approx(2 * 2 ** ((level - r2) / (r4 - r2)), abs=0.01)
