"""Counters that reset or wrap, and trapezoid power integration, counted by hand."""

from __future__ import annotations

from collectors.meters.accumulate import CounterTracker, PowerIntegrator


def test_resets_and_wraps_are_each_counted():
    reset = CounterTracker()
    assert (reset.resets, reset.wraps) == (0, 0)
    # 0 → 10 → (reset) 4 → 9 → (reset) 3: 10 + 4 + 5 + 3
    assert [reset.delta(raw) for raw in (0.0, 10.0, 4.0, 9.0, 3.0)] == [0.0, 10.0, 4.0, 5.0, 3.0]
    assert (reset.total, reset.resets, reset.wraps) == (22.0, 2, 0)
    wrap = CounterTracker(wrap_at=100.0)
    # 90 → (wrap) 5 → 95 → (wrap) 2: 15 + 90 + 7
    assert [wrap.delta(raw) for raw in (90.0, 5.0, 95.0, 2.0)] == [0.0, 15.0, 90.0, 7.0]
    assert (wrap.total, wrap.wraps, wrap.resets) == (112.0, 2, 0)


def test_power_samples_at_a_repeated_or_earlier_time_add_nothing():
    integ = PowerIntegrator()
    assert integ.add(1.0, 10.0) == 0.0
    assert integ.add(3.0, 30.0) == 40.0  # (10 + 30) / 2 W over 2 s
    assert integ.add(3.0, 50.0) == 0.0
    assert integ.add(2.0, 50.0) == 0.0  # a clock that went back
    assert integ.energy_j == 40.0
