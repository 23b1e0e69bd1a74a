"""The ledger reproduces the worked numbers of the review (collectors/docs/energy-ledger.md) and note 25
(collectors/docs/note25.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.energy import ledger


def test_marginal_width_threshold_matches_the_review():
    # p = 0.7: six drafts yield about 3.06 committed tokens (Eq. 1); the seventh survives 0.08235
    s7 = 0.7**7
    g6 = ledger.expected_advance(0.7**j for j in range(1, 7))
    assert g6 == pytest.approx(3.0588, abs=5e-5)
    threshold = ledger.marginal_width_threshold(s7, g6)
    assert threshold == pytest.approx(0.0269, abs=5e-5)
    assert ledger.marginal_width_pays(0.02, s7, g6)
    assert not ledger.marginal_width_pays(0.03, s7, g6)


def test_draft_over_plain_satisfies_eq6_on_note25_batch_one():
    # note 25, batch 1: plain 22.9 W, 61.9 tok/s, 370 mJ/token; draft 29.8 W, 78.3 tok/s, 381 mJ/token
    speedup = ledger.draft_over_plain(78.3, 61.9)
    power_ratio = ledger.draft_over_plain(29.8, 22.9)
    energy_ratio = ledger.draft_over_plain(1000 * 29.8 / 78.3, 1000 * 22.9 / 61.9)
    assert speedup == pytest.approx(1.26, abs=0.005)
    assert energy_ratio == pytest.approx(1.03, abs=0.005)
    assert power_ratio is not None and speedup is not None
    assert energy_ratio == pytest.approx(power_ratio / speedup)


def test_draft_over_plain_without_a_figure_is_none():
    assert ledger.draft_over_plain(None, 370.0) is None
    assert ledger.draft_over_plain(381.0, None) is None
    assert ledger.draft_over_plain(381.0, 0.0) is None


def test_acceptance_advance_and_width():
    # One request of the real drafting server: draft_n 19, accepted 15 over 32 decode steps.
    assert ledger.acceptance(19, 15) == pytest.approx(15 / 19)
    assert ledger.mean_committed_advance(15, 32) == pytest.approx(1.46875)
    assert ledger.mean_verified_width(19, 32) == pytest.approx(1.59375)
    assert ledger.acceptance(0, 0) is None
    assert ledger.mean_committed_advance(0, 0) is None


def test_survival_from_real_per_position_counters():
    # draft-simple.metrics.after.txt: 208 verify steps, per position 166, 43, 5, 2; 216 accepted.
    survival = ledger.survival_from_positions([166, 43, 5, 2], 208)
    assert survival[0] == pytest.approx(166 / 208)
    assert ledger.expected_advance(survival) == pytest.approx(ledger.mean_committed_advance(216, 208))


def test_window_energy_interpolates_boundaries():
    times = [0.0, 1.0, 2.0, 3.0]
    energy = [0.0, 10.0, 30.0, 60.0]  # 10 W, then 20 W, then 30 W
    assert ledger.window_energy_j(times, energy, 0.5, 2.5) == pytest.approx(5.0 + 20.0 + 15.0)
    assert ledger.window_energy_j(times, energy, 1.0, 2.0) == pytest.approx(20.0)
    assert ledger.window_energy_j(times, energy, 2.5, 3.5) is None  # never extrapolate


def test_gross_and_net_energy():
    assert ledger.net_energy_j(100.0, 5.0, 10.0) == pytest.approx(50.0)
    assert ledger.net_energy_j(40.0, 5.0, 10.0) == pytest.approx(-10.0)  # noise stays visible


def test_attribution_splits_by_tokens_and_adds_up():
    times = [0.0, 1.0, 2.0]
    energy = [0.0, 30.0, 50.0]
    a = ledger.RequestActivity("a", 0.0, 2.0, ((0.5, 1), (0.9, 2), (1.5, 1)))
    b = ledger.RequestActivity("b", 0.0, 2.0, ((0.6, 3), (1.6, 3)))
    per_request, unattributed = ledger.attribute_energy_j(times, energy, [a, b])
    # interval 1: a 3 tokens, b 3 tokens -> 15 J each; interval 2: a 1, b 3 -> 5 and 15 J
    assert per_request["a"] == pytest.approx(20.0)
    assert per_request["b"] == pytest.approx(30.0)
    assert unattributed == 0.0


def test_a_request_over_half_an_interval_alone_gets_half_its_energy():
    # 10 J in [0, 1] at constant power; the request ran 0.25-0.75 with nothing beside it
    alone = ledger.RequestActivity("a", 0.25, 0.75, ((0.5, 4),))
    per_request, unattributed = ledger.attribute_energy_j([0.0, 1.0], [0.0, 10.0], [alone])
    assert per_request["a"] == pytest.approx(5.0)
    assert unattributed == pytest.approx(5.0)


def test_two_partially_overlapping_requests():
    # 30 J in the first second, 20 J in the next: 30 W, then 20 W. a runs 0-2, b 0.2-1.8.
    times = [0.0, 1.0, 2.0]
    energy = [0.0, 30.0, 50.0]
    a = ledger.RequestActivity("a", 0.0, 2.0, ((0.5, 1), (0.9, 2), (1.5, 1)))
    b = ledger.RequestActivity("b", 0.2, 1.8, ((0.6, 3), (1.6, 3)))
    per_request, unattributed = ledger.attribute_energy_j(times, energy, [a, b])
    # 0-0.2: a alone, 6 J. 0.2-1: 24 J, a 3 tokens and b 3: 12 J each.
    # 1-1.8: 16 J, a 1 token and b 3: 4 and 12 J. 1.8-2: a alone, 4 J.
    assert per_request["a"] == pytest.approx(6 + 12 + 4 + 4)
    assert per_request["b"] == pytest.approx(12 + 12)
    assert unattributed == pytest.approx(0.0)


def test_four_identical_concurrent_requests_share_equally():
    # the example: 40 W for 10 s, four requests each committing 100 tokens, 10 a second
    times = [t / 2 for t in range(21)]
    energy = [40.0 * t for t in times]
    tokens = tuple((0.05 + i / 10, 1) for i in range(100))
    requests = [ledger.RequestActivity(f"r{i}", 0.0, 10.0, tokens) for i in range(4)]
    per_request, unattributed = ledger.attribute_energy_j(times, energy, requests)
    assert per_request == {f"r{i}": pytest.approx(100.0) for i in range(4)}  # 1000 mJ/token each
    assert unattributed == pytest.approx(0.0)


def test_attribution_prefill_equal_split_and_idle_unattributed():
    times = [0.0, 1.0, 2.0, 3.0]
    energy = [0.0, 5.0, 15.0, 25.0]
    a = ledger.RequestActivity("a", 1.0, 3.0, ((2.5, 4),))
    b = ledger.RequestActivity("b", 1.0, 3.0, ())
    per_request, unattributed = ledger.attribute_energy_j(times, energy, [a, b])
    assert unattributed == pytest.approx(5.0)  # nothing ran in the first second
    assert per_request["a"] == pytest.approx(5.0 + 10.0)
    assert per_request["b"] == pytest.approx(5.0)


meter_increments = st.lists(st.floats(min_value=0.0, max_value=50.0), min_size=2, max_size=20)
raw_requests = st.lists(
    st.tuples(
        st.floats(0, 19),
        st.floats(0, 19),
        st.lists(st.tuples(st.floats(0, 19), st.integers(1, 5))),
        st.booleans(),
    ),
    min_size=1,
    max_size=5,
)


def meter_and_requests(increments, raw):
    times = [float(i) for i in range(len(increments) + 1)]
    energy = [0.0]
    for inc in increments:
        energy.append(energy[-1] + inc)
    requests = [
        ledger.RequestActivity(str(i), min(a, b), max(a, b) + 0.5, tuple(tokens), spread=spread)
        for i, (a, b, tokens, spread) in enumerate(raw)
    ]
    return times, energy, requests


@given(meter_increments, raw_requests)
def test_attribution_conserves_energy(increments, raw):
    times, energy, requests = meter_and_requests(increments, raw)
    per_request, unattributed = ledger.attribute_energy_j(times, energy, requests)
    assert sum(per_request.values()) + unattributed == pytest.approx(energy[-1], abs=1e-6)


@given(meter_increments, raw_requests, st.randoms(use_true_random=False))
def test_attribution_is_a_function_of_the_set_of_requests(increments, raw, rng):
    times, energy, requests = meter_and_requests(increments, raw)
    per_request, unattributed = ledger.attribute_energy_j(times, energy, requests)
    shuffled = list(requests)
    rng.shuffle(shuffled)
    again, unattributed_again = ledger.attribute_energy_j(times, energy, shuffled)
    assert again == {k: pytest.approx(v, abs=1e-9) for k, v in per_request.items()}
    assert unattributed_again == pytest.approx(unattributed, abs=1e-9)


@given(meter_increments, raw_requests)
def test_a_request_gets_no_more_than_the_energy_of_its_own_span(increments, raw):
    times, energy, requests = meter_and_requests(increments, raw)
    per_request, _ = ledger.attribute_energy_j(times, energy, requests)
    for r in requests:
        t0, t1 = max(r.t_start_s, times[0]), min(r.t_end_s, times[-1])
        own_span_j = ledger.window_energy_j(times, energy, t0, t1) if t0 < t1 else 0.0
        assert per_request[r.request_id] <= own_span_j + 1e-6


def test_a_spread_request_takes_its_tokens_rate_not_its_lumps():
    # 10 W over [0, 2]; a commits 10 tokens paced as one lump at 2 s (spread: 5 a second over [0, 2]),
    # b commits 5 at 0.5 s and 5 at 1.5 s. Second 1: a 5 of 10 tokens, 5 J; second 2 the same: a 10 J.
    a = ledger.RequestActivity("a", 0.0, 2.0, ((2.0, 10.0),), spread=True)
    b = ledger.RequestActivity("b", 0.0, 2.0, ((0.5, 5.0), (1.5, 5.0)))
    per_request, _ = ledger.attribute_energy_j([0.0, 1.0, 2.0], [0.0, 10.0, 20.0], [a, b])
    assert per_request == {"a": pytest.approx(10.0), "b": pytest.approx(10.0)}
    # as a lump, a had nothing in the first second and its 10 tokens beside b's 5 in the second
    lump, _ = ledger.attribute_energy_j([0.0, 1.0, 2.0], [0.0, 10.0, 20.0], [replace(a, spread=False), b])
    assert lump["a"] == pytest.approx(10 * 10 / 15)


def test_one_committed_token_is_a_figure():
    # 2 J for one token is 2000 mJ/token; 0 tokens has no figure
    assert ledger.mj_per_token(2.0, 1) == pytest.approx(2000.0)
    assert ledger.mj_per_token(2.0, 0) is None


def test_ratios_over_one_drafted_token_or_one_step():
    # the smallest windows that have a figure: 1 drafted and accepted in 1 step
    assert ledger.acceptance(1, 1) == 1.0
    assert ledger.mean_committed_advance(1, 1) == 2.0
    assert ledger.mean_verified_width(1, 1) == 2.0
    assert ledger.mean_verified_width(3, 0) is None
    assert ledger.survival_from_positions([1, 0], 1) == [1.0, 0.0]
    assert ledger.survival_from_positions([1, 0], 0) == []


def test_break_even_is_not_a_saving():
    # Eq. 5: a width that costs exactly S/G gains nothing
    assert ledger.marginal_width_threshold(0.5, 2.0) == 0.25
    assert not ledger.marginal_width_pays(0.25, 0.5, 2.0)


def test_no_energy_outside_the_meters_readings():
    times, energy = [1.0, 2.0], [0.0, 10.0]
    assert ledger.energy_at_j([], [], 1.0) is None
    assert ledger.energy_at_j(times, energy, 0.5) is None  # before the first reading: never extrapolate
    assert ledger.window_energy_j(times, energy, 0.5, 1.5) is None
    assert ledger.energy_at_j(times, energy, 1.25) == pytest.approx(2.5)


def test_a_repeated_meter_time_stays_unattributed_and_the_rest_is_still_split():
    # 10 W over [0, 2], a repeated reading at 2 s that moved 1 J, then 10 W over [2, 3]; one request 1-3 s
    times = [0.0, 1.0, 2.0, 2.0, 3.0]
    energy = [0.0, 10.0, 20.0, 21.0, 31.0]
    alone = ledger.RequestActivity("a", 1.0, 3.0, ((1.5, 1), (2.5, 1)))
    per_request, unattributed = ledger.attribute_energy_j(times, energy, [alone])
    assert per_request["a"] == pytest.approx(10.0 + 10.0)  # [1, 2] and [2, 3]
    assert unattributed == pytest.approx(10.0 + 1.0)  # [0, 1] ran nothing; the zero-length interval's joule
