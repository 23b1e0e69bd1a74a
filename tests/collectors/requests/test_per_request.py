"""Per-request figures: energy, tokens per joule, energy-delay product, acceptance histograms."""

from __future__ import annotations

import pytest

from collectors.requests.per_request import (
    acceptance_histogram,
    accepted_per_step_from_bursts,
    accepted_per_step_from_survival,
    request_energy,
    summed_survival,
)


def test_a_request_of_120_tokens_at_250_mj_per_token():
    # 120 × 0.25 J = 30 J; 120 / 30 = 4 tokens per joule (1000 / 250); over 2.5 s, 30 × 2.5 = 75 J·s
    figures = request_energy(30.0, 120, 2.5)
    assert figures is not None
    assert figures.tokens_per_j == pytest.approx(4.0)
    assert figures.edp_js == pytest.approx(75.0)


def test_no_joules_or_no_tokens_is_no_figure():
    assert request_energy(None, 120, 2.5) is None
    assert request_energy(30.0, 0, 2.5) is None
    assert request_energy(30.0, None, 2.5) is None
    zero = request_energy(0.0, 10, 1.0)
    assert zero is not None and zero.tokens_per_j is None  # never a division by zero


def test_acceptance_bins_put_each_request_in_its_tenth_and_leave_unknowns_apart():
    # 0.05 -> 0-10 %; 0.10 -> 10-20 % (bins are closed below); 0.79 and 0.75 -> 70-80 %; 1.0 -> 90-100 %
    hist = acceptance_histogram([0.05, 0.10, 0.79, 0.75, 1.0, None, None])
    assert hist.counts == (1, 1, 0, 0, 0, 0, 0, 2, 0, 1)
    assert hist.no_counts == 2 and hist.requests == 5
    assert hist.labels()[0] == "0-10 %" and hist.labels()[-1] == "90-100 %"


def test_steps_by_accepted_tokens_from_survival():
    # S1 = 0.8, S2 = 0.5, S3 = 0.2: 20 % of steps accepted none, 30 % one, 30 % two, 20 % three
    shares = accepted_per_step_from_survival([0.8, 0.5, 0.2])
    assert shares == pytest.approx([0.2, 0.3, 0.3, 0.2])
    # and G = Σ (1 + j) · share = 1 + Σ S_j = 2.5
    assert sum((1 + j) * s for j, s in enumerate(shares)) == pytest.approx(2.5)


def test_steps_by_accepted_tokens_from_bursts_skip_prefill():
    # prefill's 1, then steps of 3, 1, 4, 3: accepted 2, 0, 3, 2
    assert accepted_per_step_from_bursts([1, 3, 1, 4, 3]) == [1, 0, 2, 1]
    assert accepted_per_step_from_bursts([1]) == []


def test_survival_over_windows_is_a_ratio_of_sums():
    # window one: 10 steps, 8 reached position 1, 4 position 2; window two: 30 steps, 6 reached 1
    # and its drafts were one long; a window with no steps counts for nothing.
    # S1 = 14 / 40 = 0.35, S2 = 4 / 40 = 0.1 (the mean of 0.8 and 0.2 would say 0.5)
    assert summed_survival([((8, 4), 10), ((6,), 30), ((), None)]) == pytest.approx((0.35, 0.1))
    assert summed_survival([]) == ()
