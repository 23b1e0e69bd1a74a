"""Drafting figures over the rolling window: counts of the window's polls summed, then divided once."""

from __future__ import annotations

import pytest

from collectors.servers.rolling import rolling_drafting
from collectors.servers.snapshot import ServerSnapshot
from tests.support.snapshots import window_snapshot


def poll(t_s: float, drafted, accepted, steps, positions=(), **kw) -> ServerSnapshot:
    return window_snapshot(
        t_s,
        window_drafted=drafted,
        window_accepted=accepted,
        window_steps=steps,
        window_per_position=positions,
        **kw,
    )


def test_a_request_finishing_in_one_poll_of_three_gives_the_window_its_figures():
    # llama-server counts a request when it ends: polls 1 and 3 saw nothing finish
    polls = [poll(1, 0, 0, 0), poll(2, 40, 30, 20, (15, 10, 5)), poll(3, 0, 0, 0)]
    assert polls[-1].acceptance is None and polls[-1].mean_advance is None  # one poll alone says nothing
    merged = rolling_drafting(polls, window_s=30)
    assert merged is not None
    assert merged.window_s == 3.0
    assert merged.acceptance == pytest.approx(30 / 40)
    assert merged.mean_advance == pytest.approx(1 + 30 / 20)
    assert merged.verified_width == pytest.approx(1 + 40 / 20)
    assert merged.survival == pytest.approx((0.75, 0.5, 0.25))
    assert 1 + sum(merged.survival) == pytest.approx(merged.mean_advance)


def test_survival_is_unknown_when_a_poll_that_accepted_has_no_positions():
    # G over both polls is 1 + (30 + 10) / (20 + 10) = 2.33; positions from the first poll alone
    # would give S = 15/30, 10/30, 5/30 and 1 + Σ S = 2.0: a survival that is not G's window
    merged = rolling_drafting([poll(1, 40, 30, 20, (15, 10, 5)), poll(2, 20, 10, 10)], window_s=30)
    assert merged.mean_advance == pytest.approx(1 + 40 / 30)
    assert merged.survival == ()
    # a poll that accepted nothing has nothing to place: the other poll's positions stand
    merged = rolling_drafting([poll(1, 40, 30, 20, (15, 10, 5)), poll(2, 0, 0, 10)], window_s=30)
    assert merged.survival == pytest.approx((15 / 30, 10 / 30, 5 / 30))
    assert 1 + sum(merged.survival) == pytest.approx(merged.mean_advance)


def test_two_finishing_polls_are_summed_before_dividing():
    # 30/40 and 5/20 average to 50 %; the window's acceptance is 35/60
    merged = rolling_drafting([poll(1, 40, 30, 20), poll(2, 20, 5, 15)], window_s=30)
    assert merged.acceptance == pytest.approx(35 / 60)
    assert merged.mean_advance == pytest.approx(1 + 35 / 35)


def test_old_polls_polls_before_since_restarts_and_failures_are_left_out():
    polls = [
        poll(1, 100, 100, 10),  # older than the window
        poll(40, 100, 0, 10),  # began before `since` (a sweep's traffic)
        poll(50, 100, 0, 10, restarted=True),
        poll(51, 100, 0, 10, status="unreachable"),
        poll(52, 40, 30, 20),
    ]
    merged = rolling_drafting(polls, window_s=30, since_s=45)
    assert merged.acceptance == pytest.approx(30 / 40)
    assert merged.window_s == 1.0


def test_g_comes_from_polls_that_know_their_steps():
    # --no-slots: a poll whose steps are unknown would pair its accepted count with no steps
    polls = [poll(1, 40, 30, 20), poll(2, 40, 40, None)]
    merged = rolling_drafting(polls, window_s=30)
    assert merged.mean_advance == pytest.approx(1 + 30 / 20)
    assert merged.acceptance == pytest.approx(30 / 40)


def test_acceptance_stays_when_no_poll_knows_its_steps():
    merged = rolling_drafting([poll(1, 40, 30, None), poll(2, 20, 10, None)], window_s=30)
    assert merged.acceptance == pytest.approx(40 / 60)
    assert merged.mean_advance is None


def test_an_approximate_poll_makes_the_window_approximate():
    merged = rolling_drafting([poll(1, 40, 30, 20), poll(2, 40, 30, 20, counters_rounded=True)], window_s=30)
    assert merged.window_approximate


def test_no_counts_give_no_figures_and_no_snapshot_gives_none():
    merged = rolling_drafting([poll(1, None, None, None)], window_s=30)
    assert merged is not None and merged.acceptance is None and merged.mean_advance is None
    assert rolling_drafting([], window_s=30) is None


def test_the_window_holds_window_s_of_polls_and_polls_begun_at_since():
    # 1 s polls at 1..31: the 30 s window is the polls at 2..31, not 31 s of them
    polls = [poll(float(t), 10, 5, 10) for t in range(1, 32)]
    merged = rolling_drafting(polls, window_s=30)
    assert merged.window_s == 30.0 and merged.window_drafted == 300
    # `since` 45: the poll that began exactly then counts, one that began 0.5 s before does not
    polls = [poll(45.5, 100, 0, 10), poll(46.0, 40, 30, 20), poll(47.0, 40, 10, 20)]
    merged = rolling_drafting(polls, window_s=30, since_s=45)
    assert merged.acceptance == pytest.approx(40 / 80)
    assert merged.window_s == 2.0


def test_every_count_of_the_window_is_summed():
    polls = [
        poll(1, 40, 30, 20, window_drafted_steps=16, window_finished=1, window_steps_exact=False),
        poll(2, 20, 5, 15, window_drafted_steps=10, window_finished=2, counters_rounded=False),
    ]
    merged = rolling_drafting(polls, window_s=30)
    assert merged.window_finished == 3
    # the servers' "mean acceptance length": 1 + 35 accepted / 26 steps that drafted
    assert merged.advance_per_drafted_step == pytest.approx(1 + 35 / 26)
    assert merged.window_approximate  # an earlier poll's step count was uncertain
    assert not rolling_drafting(polls[1:], window_s=30).window_approximate
    rounded_first = [poll(1, 40, 30, 20, counters_rounded=True), poll(2, 40, 30, 20)]
    assert rolling_drafting(rounded_first, window_s=30).window_approximate


def test_a_count_one_poll_does_not_know_makes_the_sum_unknown():
    # drafted steps known in one poll only: 1 + accepted/16 would pair 60 accepted with one poll's steps
    polls = [poll(1, 40, 30, 20, window_drafted_steps=16), poll(2, 40, 30, 20, window_drafted_steps=None)]
    merged = rolling_drafting(polls, window_s=30)
    assert merged.window_drafted_steps is None and merged.advance_per_drafted_step is None
    assert merged.acceptance == pytest.approx(60 / 80)


def test_a_latest_poll_left_out_leaves_no_count_of_its_own():
    # a restart: the latest poll's own counts are not the window's (and nothing else is in it)
    latest = poll(5, 40, 30, 20, (20, 10), window_drafted_steps=16, restarted=True)
    merged = rolling_drafting([latest], window_s=30)
    assert merged.window_drafted is None and merged.window_accepted is None and merged.window_steps is None
    assert merged.window_per_position == ()
    assert merged.acceptance is None and merged.mean_advance is None and merged.survival == ()
    assert merged.advance_per_drafted_step is None


def test_survival_needs_the_windows_steps_as_well_as_its_positions():
    # --no-slots: llama-server's per-position counters moved, but the steps (T − R − A) are unknown
    assert poll(1.0, 8, 6, None, positions=(4, 2)).survival == ()
    assert poll(1.0, 8, 6, 0, positions=(4, 2)).survival == ()
    assert poll(1.0, 8, 6, 4, positions=()).survival == ()
    assert poll(1.0, 8, 6, 4, positions=(4, 2)).survival == pytest.approx((1.0, 0.5))  # 4/4 and 2/4
