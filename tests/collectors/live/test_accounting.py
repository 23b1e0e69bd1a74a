"""Rolling live energy: window joules over window tokens, gross and net, and the batch."""

from __future__ import annotations

import dataclasses
import random
import statistics

import pytest

from collectors.live.accounting import LiveLedger
from collectors.meters import MeterReading
from collectors.servers.snapshot import ServerSnapshot
from tests.support.snapshots import window_snapshot


def snap(t_s: float, tokens: int, busy: int = 1, per_decode: float | None = 1.0) -> ServerSnapshot:
    return window_snapshot(t_s, window_tokens=tokens, slots_busy=busy, busy_slots_per_decode=per_decode)


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


def test_rolling_energy_tokens_and_idle_cover_the_same_span_at_start_up():
    # A steady 40 W and 100 tok/s from t=0, polls every second from t=0, the meter's first reading at
    # 0.5 s, idle 10 W: every figure is 40 W / 100 tok/s = 400 mJ/token gross, (40-10)/100 = 300 net.
    live = LiveLedger(energy_window_s=30.0)
    live.known_idle_w = 10.0
    live.add_snapshot(dataclasses.replace(snap(0.0, 0), window_s=None, window_tokens=None))  # no window yet
    figures = []
    for step in range(5, 101):  # the meter every 0.1 s from 0.5 s, a poll at each whole second
        t = step / 10
        live.add_power(t, 40.0, 40.0 * t)
        if step % 10 == 0:
            live.add_snapshot(snap(t, 100))
            r = live.rolling()
            if r.mj_per_token is not None:
                figures.append((r.mj_per_token, r.net_mj_per_token))
    assert len(figures) == 9  # from the 2 s poll on: the first poll's window began before the meter
    assert figures == [(pytest.approx(400.0), pytest.approx(300.0))] * 9


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


def test_an_energy_only_reading_gets_its_power_from_the_energy_slope():
    live = LiveLedger()
    assert live.add_reading(MeterReading(1.0, 100.0)) is None  # no slope yet: nothing to store
    point = live.add_reading(MeterReading(1.5, 120.0))
    assert point is not None and point.power_w == pytest.approx(40.0)  # 20 J in 0.5 s
    live.add_reading(MeterReading(2.0, 140.0, power_w=38.0))  # a meter's own power is kept
    assert live.add_reading(MeterReading(2.0, 150.0, power_w=60.0)) is None  # not newer: dropped
    assert [p.power_w for p in live.power] == [pytest.approx(40.0), 38.0]
    assert [p.energy_j for p in live.power] == [120.0, 140.0]


def idle_by_scan(live: LiveLedger) -> float | None:
    """The definition, written the slow way: readings inside any idle poll's window, each once."""
    spans = [
        (s.taken_at_s - s.window_s, s.taken_at_s)
        for s in live.snapshots
        if s.window_s and s.slots_busy == 0 and not s.window_tokens
    ]
    samples = [p.power_w for p in live.power if any(a <= p.t_s <= b for a, b in spans)]
    return statistics.median(samples) if len(samples) >= 10 else None


@pytest.mark.parametrize("seed", range(20))
def test_idle_by_bisection_agrees_with_the_scan(seed):
    rng = random.Random(seed)
    live = LiveLedger()
    t = 0.0
    for i in range(rng.randint(0, 400)):
        t += rng.choice((0.1, 0.25, 0.5))  # readings that fall on poll boundaries too
        live.add_power(t, rng.uniform(5.0, 80.0), float(i))
    for k in range(1, rng.randint(1, 80)):
        window = rng.choice((0.5, 1.0, 2.0))
        idle = rng.random() < 0.6
        live.add_snapshot(
            ServerSnapshot(
                url="u",
                backend="llama.cpp",
                taken_at_s=k * 0.5,
                status="ok",
                window_s=window,
                window_tokens=0 if idle else 10,
                slots_busy=0 if idle else 1,
            )
        )
    assert live.idle_w() == idle_by_scan(live)


def test_idle_is_computed_once_per_change_of_its_inputs():
    live = ledger_with(10.0, seconds=4)
    for i in range(41, 91):  # then 30 W
        live.add_power(i / 10, 30.0, 40.0 + 30.0 * (i / 10 - 4.0))
    for t in range(1, 5):
        live.add_snapshot(snap(float(t), 0, busy=0, per_decode=None))
    scans = []
    scan = live._idle_from_polls
    live._idle_from_polls = lambda: scans.append(1) or scan()
    assert live.idle_w() == live.idle_w() == pytest.approx(10.0)
    live.rolling()
    assert len(scans) == 1
    for t in range(5, 10):  # the 30 W part turns out idle too: 41 readings at 10 W, 50 at 30 W
        live.add_snapshot(snap(float(t), 0, busy=0, per_decode=None))
    assert live.idle_w() == pytest.approx(30.0) and len(scans) == 2
    live.add_power(9.1, 50.0, 200.0)  # outside every idle poll: same figure, computed again
    assert live.idle_w() == pytest.approx(30.0) and len(scans) == 3
    live.known_idle_w = 12.0
    assert live.idle_w() == 12.0
    live.known_idle_w = None
    assert live.idle_w() == pytest.approx(30.0) and len(scans) == 4


def test_the_rolling_window_is_the_last_30_s_of_polls_at_any_clock_value():
    # monotonic clocks start anywhere: polls every second from 1001 s to 1041 s, a steady 40 W, 100 tok/s
    live = LiveLedger()  # the default window: the dashboard's "over the last 30 s"
    for i in range(0, 421):
        t = 1000.0 + i / 10
        live.add_power(t, 40.0, 40.0 * (t - 1000.0))
    for t in range(1001, 1042):
        live.add_snapshot(snap(float(t), 100))
    r = live.rolling()
    # the polls at 1012..1041 cover [1011, 1041]: 30 s, 3000 tokens, 1200 J
    assert r.window_s == pytest.approx(30.0) and r.tokens == 3000
    assert r.energy_j == pytest.approx(1200.0) and r.mj_per_token == pytest.approx(400.0)


def test_polls_without_tokens_add_none():
    live = ledger_with(40.0)
    for t in range(1, 11):  # 100 tokens a second for 5 s, then none (the counters of a finished request)
        live.add_snapshot(snap(float(t), 100 if t <= 5 else 0))
    live.add_snapshot(dataclasses.replace(snap(10.0, 0), taken_at_s=10.0, window_tokens=None))
    r = live.rolling()
    assert r.tokens == 500 and r.mj_per_token == pytest.approx(400.0 / 500 * 1000)


def test_no_figure_without_both_sources():
    empty = LiveLedger().rolling()
    assert (empty.window_s, empty.energy_j, empty.tokens, empty.mj_per_token) == (None, None, 0, None)
    polls_only = LiveLedger()
    polls_only.add_snapshot(snap(1.0, 100))
    assert polls_only.rolling() == empty
    meter_ahead = ledger_with(40.0, seconds=1)  # the meter has not read past any poll's window yet
    meter_ahead.add_snapshot(snap(5.0, 100))
    assert meter_ahead.rolling() == empty


def test_histories_are_bounded():
    live = LiveLedger()
    for i in range(3500):
        live.add_power(i / 10, 40.0, 4.0 * i)
    for t in range(400):
        live.add_snapshot(snap(float(t), 10))
    assert len(live.power) == 3000 and live.power[0].t_s == 50.0  # five minutes of 0.1 s readings
    assert len(live.snapshots) == 300 and live.snapshots[0].taken_at_s == 100.0  # of 1 s polls


def test_a_busy_poll_without_tokens_is_not_idle_and_ten_readings_give_a_baseline():
    live = LiveLedger()
    for i in range(0, 21):  # 10 W over [0, 2] then 40 W (a prefill) over (2, 4]
        t = i / 10
        live.add_power(t, 10.0, 10.0 * t)
    for i in range(21, 41):
        t = i / 10
        live.add_power(t, 40.0, 20.0 + 40.0 * (t - 2.0))
    live.add_snapshot(snap(1.0, 0, busy=0, per_decode=None))  # idle over [0, 1]: readings 0.0..1.0, 11
    live.add_snapshot(snap(3.0, 0, busy=1, per_decode=None))  # prefilling over [2, 4]: no tokens yet
    live.add_snapshot(snap(4.0, 0, busy=1, per_decode=None))
    assert live.idle_w() == pytest.approx(10.0)
    ten = LiveLedger()
    for i in range(1, 11):  # exactly ten readings inside one idle poll's window
        ten.add_power(i / 10, 12.0, 1.2 * i)
    ten.add_snapshot(snap(1.0, 0, busy=0, per_decode=None))
    assert ten.idle_w() == pytest.approx(12.0)
    # nine readings: no baseline
    nine = LiveLedger()
    for i in range(2, 11):
        nine.add_power(i / 10, 12.0, 1.2 * i)
    nine.add_snapshot(snap(1.0, 0, busy=0, per_decode=None))
    assert nine.idle_w() is None


def test_drafting_figures_share_the_energy_windows_polls():
    live = LiveLedger(energy_window_s=30.0)

    def drafting_poll(t: float, drafted: int, accepted: int) -> ServerSnapshot:
        return dataclasses.replace(
            snap(t, 100), window_drafted=drafted, window_accepted=accepted, window_steps=50
        )

    live.add_snapshot(drafting_poll(1.0, 100, 100))  # older than the window at 40 s
    live.add_snapshot(drafting_poll(20.0, 100, 0))  # a sweep's traffic: before live_since_s
    live.add_snapshot(drafting_poll(39.0, 40, 30))
    live.add_snapshot(drafting_poll(40.0, 40, 10))
    live.live_since_s = 30.0
    merged = live.drafting()
    assert merged is not None and merged.acceptance == pytest.approx(40 / 80) and merged.window_s == 2.0


def test_batch_is_the_mean_of_the_last_ten_polls_since_live_began():
    live = LiveLedger()
    live.add_snapshot(snap(1.0, 100, per_decode=8.0))  # the eleventh from the end
    for t in range(2, 12):
        live.add_snapshot(snap(float(t), 100, per_decode=2.0))
    assert live.current_batch() == pytest.approx(2.0)
    live = LiveLedger()
    live.add_snapshot(snap(11.5, 100, per_decode=8.0))  # began 0.5 s before live_since_s
    live.add_snapshot(snap(12.0, 100, per_decode=4.0))  # began exactly at it
    live.add_snapshot(snap(13.0, 100, per_decode=2.0))
    live.live_since_s = 11.0
    assert live.current_batch() == pytest.approx(3.0)
    live.live_since_s = 20.0  # no window since then: the busy slots now
    assert live.current_batch() == 1.0
    live.add_snapshot(snap(21.0, 0, busy=3, per_decode=None))
    assert live.current_batch() == 3.0


def test_latest_is_the_newest_poll():
    live = LiveLedger(energy_window_s=30.0)
    assert live.latest is None
    first, second = snap(1.0, 100, busy=1), snap(2.0, 300, busy=3)
    live.add_snapshot(first)
    assert live.latest is first
    live.add_snapshot(second)
    assert live.latest is second and live.latest.slots_busy == 3


def test_a_window_below_the_idle_baseline_has_no_net_figure_and_says_why():
    # 5 W over the window against a baseline of 10 W (measured before the machine went quieter):
    # (5 - 10) W / 100 tok/s would be -50 mJ/token; no energy is negative, the baseline is stale
    live = ledger_with(5.0)
    live.known_idle_w = 10.0
    for t in range(1, 11):
        live.add_snapshot(snap(float(t), 100))
    r = live.rolling()
    assert r.mj_per_token == pytest.approx(50.0)
    assert r.net_mj_per_token is None and r.net_problem == "below the idle baseline: re-measure idle"
    live.known_idle_w = 4.0  # re-measured: 10 mJ/token net
    assert live.rolling().net_mj_per_token == pytest.approx(10.0) and live.rolling().net_problem is None


def test_recent_tok_s_is_the_last_polls_tokens_over_their_seconds():
    live = LiveLedger()

    def poll(t_s: float, window_s: float | None, tok_s: float | None) -> None:
        base = window_snapshot(t_s, window_tokens=0, slots_busy=1)
        live.add_snapshot(dataclasses.replace(base, window_s=window_s, live_tok_s=tok_s))

    assert live.recent_tok_s() is None
    poll(10.0, 1.0, 300.0)  # ended 5 s before the latest: out of the 5 s
    poll(11.0, 1.0, 100.0)
    poll(12.5, 1.5, 200.0)
    poll(13.0, 0.5, None)  # a poll that read no tokens/s: neither its tokens nor its seconds
    poll(15.0, 2.0, 150.0)
    # by hand: (100 * 1 + 200 * 1.5 + 150 * 2) / (1 + 1.5 + 2) = 700 / 4.5
    assert live.recent_tok_s() == pytest.approx(700 / 4.5)
    live.live_since_s = 12.0  # a sweep ended at 12: the polls begun before it are left out
    assert live.recent_tok_s() == pytest.approx(300 / 2.0)
