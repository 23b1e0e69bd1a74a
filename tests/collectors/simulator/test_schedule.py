"""A loaded machine stalls the simulator's threads; its tokens and joules stay on its schedule.

A manual clock stands in for time, so these tests do not depend on how fast the machine runs:
moving it forward is a stall of every thread at once, after which the engine finds itself late
and catches up. With noise off, the calibrated curves give every expected figure by hand:
a plain step of B requests lasts B / T(B) seconds (one token each at T(B) / B tok/s per
request) and draws P(B) watts; with nothing running the chip draws the idle watts.
"""

from __future__ import annotations

import pytest

from collectors.simulator.accelerator import Accelerator
from collectors.simulator.engine import Engine
from collectors.simulator.profiles import NOTE25, NOTE25_TABLE
from tests.support.manual_clock import ManualClock, result_of, stall

B4 = NOTE25_TABLE[2]  # 4 requests: 192.3 tok/s, 39.0 W
LOAD_4 = {("plain", "power"): 4}


def test_the_counter_follows_the_schedule_not_the_late_thread() -> None:
    clock = ManualClock()
    accel = Accelerator(NOTE25, noise=0.0, clock=clock)
    t0, idle_w = clock(), NOTE25.idle_w
    accel.set_load("plain", LOAD_4, at_s=t0)
    accel.hold("plain", t0 + 1.0)  # a step scheduled to end one second in
    clock.advance(3.0)  # the engine's thread has not come back from it yet
    late = accel.read()
    assert late.t_s == t0 + 1.0 and late.energy_mj == pytest.approx(B4.plain_power_w * 1000.0)
    accel.set_load("plain", {}, at_s=t0 + 1.0)  # it comes back: the requests had finished on time
    done = accel.read()
    assert done.t_s == t0 + 3.0
    assert done.energy_mj == pytest.approx((B4.plain_power_w * 1.0 + idle_w * 2.0) * 1000.0)
    assert (done.busy_s, done.busy_energy_mj) == pytest.approx((1.0, B4.plain_power_w * 1000.0))
    accel.expect("plain", t0 + 4.0)  # a request arrives at 4 s; the thread admits it late
    clock.advance(2.0)
    assert accel.read().t_s == t0 + 4.0
    accel.set_load("plain", LOAD_4, at_s=t0 + 4.0)
    accel.hold("plain", t0 + 4.5)
    assert accel.read().energy_mj == pytest.approx((B4.plain_power_w * 1.5 + idle_w * 3.0) * 1000.0)


STEP_S = 4 / B4.plain_tok_s  # one plain step of four requests: 20.8 ms


@pytest.mark.parametrize(
    ("stalls_s", "gap_s"),
    [
        ([0.2] * 20, (0.0, 0.0)),  # stalls of ten steps each, caught up every time
        ([0.2, 2.5] + [0.2] * 20, (2.5 - STEP_S, 2.5)),  # a suspended machine: the schedule restarts
    ],
    ids=["short-stalls", "suspended"],
)
def test_stalls_change_neither_the_rate_nor_the_joules(
    stalls_s: list[float], gap_s: tuple[float, float]
) -> None:
    clock = ManualClock()
    accel = Accelerator(NOTE25, noise=0.0, clock=clock)
    engine = Engine("plain", NOTE25, accel, n_slots=4, noise=0.0, clock=clock)
    tasks = [engine.submit(f"request {i}", n_predict=64, ignore_eos=True) for i in range(4)]
    before = accel.read()
    engine.start()
    try:
        for stall_s in stalls_s:
            if not all(t.done for t in tasks):
                stall(accel, clock, stall_s)
    finally:
        engine.stop()
    assert all(t.done for t in tasks)
    after = accel.read()
    busy_s = after.busy_s - before.busy_s
    # 64 steps (the prompt's, then 63) of four requests together
    assert busy_s == pytest.approx(64 * STEP_S, rel=1e-9)
    assert (after.busy_energy_mj - before.busy_energy_mj) / busy_s == pytest.approx(
        B4.plain_power_w * 1000.0, rel=1e-9
    )
    idle_s = after.t_s - before.t_s - busy_s
    assert idle_s >= gap_s[0]  # the chip idled through a restart's gap, which made no tokens
    assert after.energy_mj - before.energy_mj == pytest.approx(
        (B4.plain_power_w * busy_s + NOTE25.idle_w * idle_s) * 1000.0, rel=1e-9
    )
    for task in tasks:
        timings = result_of(task).timings
        # the server's own timings come off the same schedule (with the gap, where there was one)
        span_s = (timings.prompt_ms + timings.predicted_ms) / 1000.0
        assert busy_s + gap_s[0] - 1e-9 <= span_s <= busy_s + gap_s[1] + 1e-9
