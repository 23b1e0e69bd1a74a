"""Live energy from a broken meter: a stuck, backwards or impossible meter shows as such on the
dashboard and the exporter, never as 0 mJ/token or megajoules per token."""

from __future__ import annotations

import pytest

from collectors.live.accounting import LiveLedger
from collectors.meters import MeterInfo, MeterReading
from collectors.live.verdict import live_energy
from tests.support.snapshots import window_snapshot

GPU = MeterInfo("dcgm", ("NVIDIA H200 #0",), "GPU board (remote)", "counter", 0.1)


def busy_ledger(energy_at, meter: MeterInfo | None = GPU, seconds: int = 10) -> LiveLedger:
    """Readings every 0.1 s with the counter `energy_at(t)`, a poll each second with 100 tokens."""
    live = LiveLedger(energy_window_s=30.0, meter=meter)
    for i in range(seconds * 10 + 1):
        t = i / 10
        live.add_reading(MeterReading(t, energy_at(t)))
        if i and i % 10 == 0:
            live.add_snapshot(window_snapshot(t, window_tokens=100, slots_busy=1, busy_slots_per_decode=1.0))
    return live


def test_a_working_meter_gives_mj_per_token():
    r = busy_ledger(lambda t: 500.0 * t).rolling()  # 500 W, 100 tok/s: 5000 mJ/token
    assert r.mj_per_token == pytest.approx(5000.0) and r.meter_problem is None


def test_a_stuck_counter_shows_as_stuck_not_as_zero():
    live = busy_ledger(lambda t: 1_000.0)  # the same page forever while tokens flow
    r = live.rolling()
    assert r.mj_per_token is None and r.net_mj_per_token is None
    assert r.meter_problem == "the meter counted 0 J while the server worked: it is stuck or not counting"
    assert live_energy(live, None, sweep_running=False).verdict == f"no live energy: {r.meter_problem}"


def test_a_counter_that_stops_part_way_is_stale():
    r = busy_ledger(lambda t: 500.0 * min(t, 6.0)).rolling()  # moves for 6 s, then stands still 4 s
    assert r.mj_per_token is None
    assert "did not change for 4.0 s while the server worked" in r.meter_problem


def test_an_impossible_power_shows_as_such():
    r = busy_ledger(lambda t: 50_000.0 * t).rolling()  # 50 kW from one GPU
    assert r.mj_per_token is None and "more than its devices can draw" in r.meter_problem


def test_a_counter_that_ran_back_is_named():
    live = LiveLedger(energy_window_s=30.0, meter=GPU)
    for i in range(101):
        t = i / 10
        fault = "GPU 0: from 9e+08 to 8e+08 mJ" if i == 50 else None
        live.add_reading(MeterReading(t, 500.0 * t, fault=fault))
        if i and i % 10 == 0:
            live.add_snapshot(window_snapshot(t, window_tokens=100, slots_busy=1, busy_slots_per_decode=1.0))
    r = live.rolling()
    assert r.mj_per_token is None and "went backwards" in r.meter_problem and "9e+08" in r.meter_problem


def test_without_the_meter_described_nothing_is_judged():
    # a ledger fed by hand (older callers): the figures stand as they are
    assert busy_ledger(lambda t: 1_000.0, meter=None).rolling().mj_per_token == 0.0
