"""Rolling live energy: window joules over window tokens, gross and net, and the batch."""

from __future__ import annotations

import pytest

from collectors.live import LiveLedger
from collectors.servers.snapshot import ServerSnapshot


def snap(t_s: float, tokens: int, busy: int = 1, per_decode: float | None = 1.0) -> ServerSnapshot:
    return ServerSnapshot(
        url="u",
        backend="llama.cpp",
        taken_at_s=t_s,
        status="ok",
        window_s=1.0,
        window_tokens=tokens,
        slots_busy=busy,
        busy_slots_per_decode=per_decode,
    )


def ledger_with(power_w: float = 40.0, seconds: int = 10) -> LiveLedger:
    live = LiveLedger(energy_window_s=30.0)
    for i in range(seconds * 10 + 1):
        t = i / 10
        live.add_power(t, power_w, power_w * t)
    return live


def test_rolling_mj_per_token_is_window_joules_over_window_tokens():
    live = ledger_with(40.0)
    for t in range(1, 11):
        live.add_snapshot(snap(float(t), 100))
    r = live.rolling()
    assert r.window_s == pytest.approx(10.0) and r.tokens == 1000
    assert r.energy_j == pytest.approx(400.0)
    assert r.mj_per_token == pytest.approx(400.0)
    assert r.net_mj_per_token is None  # no idle baseline yet


def test_idle_from_polls_with_nothing_running_and_net_energy():
    live = ledger_with(10.0, seconds=4)
    for i in range(41, 101):  # then 40 W while busy
        t = i / 10
        live.add_power(t, 40.0, 40.0 + 40.0 * (t - 4.0))
    for t in range(1, 5):
        live.add_snapshot(snap(float(t), 0, busy=0, per_decode=None))
    for t in range(5, 11):
        live.add_snapshot(snap(float(t), 100))
    assert live.idle_w() == pytest.approx(10.0)
    live.live_since_s = 4.0  # only the busy part
    r = live.rolling()
    assert r.tokens == 600 and r.energy_j == pytest.approx(240.0)
    assert r.net_mj_per_token == pytest.approx(1000 * (240.0 - 10.0 * 6) / 600)
    live.known_idle_w = 20.0  # a measured baseline wins
    assert live.rolling().net_mj_per_token == pytest.approx(1000 * (240.0 - 20.0 * 6) / 600)


def test_window_ends_where_both_sources_have_data_and_batch():
    live = ledger_with(40.0, seconds=5)
    for t in range(1, 9):  # polls run ahead of the meter
        live.add_snapshot(snap(float(t), 100, per_decode=2.0))
    r = live.rolling()
    assert r.tokens == 500 and r.energy_j == pytest.approx(200.0)
    assert live.current_batch() == pytest.approx(2.0)
    assert LiveLedger().rolling().mj_per_token is None
