"""Dashboard state helpers that need no Textual."""

from __future__ import annotations

import pytest

from collectors.meters import MeterReading
from collectors.servers.snapshot import ServerSnapshot
from tests.support.records import record
from tests.support.snapshots import window_snapshot
from tui.state import LiveState, slot_rates


def test_slot_rates_between_polls():
    prev = ServerSnapshot(
        url="u", backend="llama.cpp", taken_at_s=1.0, status="ok", busy_slot_tokens=((0, 10), (1, 50))
    )
    cur = ServerSnapshot(
        url="u",
        backend="llama.cpp",
        taken_at_s=1.5,
        status="ok",
        window_s=0.5,
        busy_slot_tokens=((0, 40), (1, 5), (2, 7)),
    )
    # slot 0 grew by 30 in 0.5 s; slot 1 started a new task; slot 2 was idle before
    assert slot_rates(prev, cur) == {0: 60.0}
    assert slot_rates(None, cur) == {}


def test_live_energy_pauses_for_a_sweep_and_restarts_after_it():
    state = LiveState()
    for i in range(101):
        state.add_reading(MeterReading(i / 10, 4.0 * i, 40.0))
    for t in range(1, 11):
        state.add_snapshot(window_snapshot(float(t), window_tokens=100, slots_busy=1))
    assert state.energy().mj_per_token == 400.0
    state.sweep_started()
    paused = state.energy()
    assert paused.mj_per_token is None and "sweep running" in paused.verdict
    state.sweep_ended(8.0)  # the meter saw both arms until here: only later polls count
    after = state.energy()
    assert after.tokens == 200 and after.window_s == 2.0


def test_an_energy_only_meter_fills_the_power_history():
    state = LiveState()
    for i in range(11):
        state.add_reading(MeterReading(i / 10, 4.0 * i))  # RAPL over node_exporter: joules only
    assert list(state.power_w) == [pytest.approx(40.0)] * 10
    assert len(state.ledger.power) == 10


def test_a_sweep_points_records_arriving_one_by_one_share_the_energy_equally():
    # 40 W for 10 s, four concurrent requests of 100 tokens: 1000 mJ/token each, not 4000/2000/1333/1000
    state = LiveState()
    for i in range(221):
        state.add_reading(MeterReading(i / 20, 2.0 * i, 40.0))
    for i in range(4):
        state.add_record(record(f"r{i}", 0.0, 10.0, 100, concurrency_max=4))
        state.attribution()  # the table is redrawn after each
    shown = state.attribution()
    assert [shown[f"r{i}"].mj_per_token for i in range(4)] == [pytest.approx(1000.0)] * 4


def test_a_record_the_meter_has_not_read_past_gets_its_figure_when_it_does():
    state = LiveState()
    for i in range(161):  # the meter has read to 8 s
        state.add_reading(MeterReading(i / 20, 2.0 * i, 40.0))
    state.add_record(record("probe", 0.0, 10.0, 100, concurrency_max=3))
    assert state.attribution()["probe"].mj_per_token is None
    assert not state.settle_attribution()
    for i in range(161, 221):
        state.add_reading(MeterReading(i / 20, 2.0 * i, 40.0))
    assert state.settle_attribution()  # the app redraws the requests table
    assert state.attribution()["probe"].mj_per_token == pytest.approx(4000.0)
    assert state.attribution()["probe"].shared  # the server ran three, spectop one
