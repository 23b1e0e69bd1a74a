"""After a tune, live: the setting in effect and the energy saved against always-draft this session.

Truth by hand on note 25's schedule (K 4 at 1 and 2 requests, off from 4; the cells in
tests/tui/test_tune_cli.py). A server at 8 requests under the schedule runs plain: 100 one-second
windows at 40 W are 4,000 J. Always-draft at 8 costs 163.62 / 108.79 = 1.504 times plain's
mJ/token, so it would have spent 4,000 × 1.504 = 6,016 J: 2,016 J saved, 33.5 % (1 − 1/1.504).
"""

from __future__ import annotations

import time

import pytest

from collectors.live.accounting import LiveLedger
from collectors.meters import MeterReading
from collectors.tune.derive import derive_schedule
from collectors.tune.live import ScheduleTracker, setting_text
from collectors.tune.view import NOT_IN_EFFECT, NOT_READ_BACK, READ_BACK
from tests.support.snapshots import window_snapshot
from tests.support.tune_runs import ARMS_KS, note25_run, schedule_of

RATIO_8 = (37.6 / 229.8) / (36.9 / 339.2)  # draft over plain mJ/token at 8 requests, note 25


def serve(tracker, batch, power_w=40.0, tokens_per_s=250, steps=None, since_s=None):
    """100 one-second polls after a first one (no window), the meter read every 0.5 s."""
    t0 = time.monotonic() - 300
    live = LiveLedger(30.0)
    if since_s is not None:
        live.live_since_s = t0 + since_s
    for i in range(201):
        live.add_reading(MeterReading(t0 + i / 2, power_w * i / 2, power_w))
        if i % 2 == 0:
            snap = window_snapshot(
                t0 + i / 2,
                window_s=1.0 if i else None,
                window_tokens=tokens_per_s,
                drafting=True,
                busy_slots_per_decode=float(batch),
                spec_num_steps=steps,
            )
            live.add_snapshot(snap)
            tracker.update(live)
    return live


@pytest.fixture
def schedule(tmp_path):
    return derive_schedule(note25_run(tmp_path / "run"), draft_tokens=4)


def test_the_saving_against_always_draft_where_the_schedule_runs_plain(schedule):
    tracker = ScheduleTracker(schedule)
    view = tracker.view(serve(tracker, batch=8))
    assert view.windows == 100
    assert view.always_j == pytest.approx(4000 * RATIO_8, rel=1e-3)
    assert view.saved_j == pytest.approx(4000 * (RATIO_8 - 1), rel=1e-3) == pytest.approx(2016, abs=2)
    assert view.saved_fraction == pytest.approx(1 - 1 / RATIO_8, rel=1e-3)
    assert (view.batch, view.k_scheduled, view.read_back) == (8, 0, NOT_READ_BACK)
    assert view.setting == "K 4 at 1-3, off from 4"


def test_where_the_schedule_runs_always_draft_nothing_is_saved(schedule):
    tracker = ScheduleTracker(schedule)
    view = tracker.view(serve(tracker, batch=2, power_w=35.0, tokens_per_s=125))
    assert view.windows == 100 and view.saved_j == 0 and view.always_j == pytest.approx(3500, rel=1e-3)


def test_a_read_back_step_count(schedule):
    agrees = ScheduleTracker(schedule)
    view = agrees.view(serve(agrees, batch=8, steps=0))
    assert view.read_back == READ_BACK and view.k_running == 0 and view.windows == 100
    # the server still drafts 4 at 8 requests: the schedule is not in effect, nothing is counted
    differs = ScheduleTracker(schedule)
    view = differs.view(serve(differs, batch=8, steps=4))
    assert view.windows == 0 and view.saved_j == 0
    assert (view.read_back, view.k_running, view.k_scheduled, view.windows_off) == (NOT_IN_EFFECT, 4, 0, 100)


def test_windows_before_a_sweep_ended_are_not_counted(schedule):
    tracker = ScheduleTracker(schedule)
    view = tracker.view(serve(tracker, batch=8, since_s=50.0))  # the first 50 s were a sweep's
    assert view.windows == 50


def test_the_setting_in_short():
    assert setting_text(schedule_of(ARMS_KS)) == "K 4 at 1, K 2 at 2-7, off from 8"
    assert setting_text(schedule_of({1: 0, 2: 4, 8: 2})) == "off at 1, K 4 at 2-7, K 2 from 8"
