"""Calibration data and interpolation, without any server."""

from __future__ import annotations

import random

import pytest

from collectors.simulator.curves import Curve
from collectors.simulator.profiles import (
    CLASSES,
    NOTE25,
    NOTE25_ACCEPTANCE_RANGE,
    NOTE25_DRAFT,
    NOTE25_PLAIN,
    NOTE25_TABLE,
    get_profile,
)
from collectors.simulator.textgen import DraftSampler, TokenStream, solve_position_acceptance, tokenize


def test_curves_pass_through_note25() -> None:
    for row in NOTE25_TABLE:
        assert NOTE25_PLAIN.tok_s.at(row.requests) == row.plain_tok_s
        assert NOTE25_DRAFT.power_w.at(row.requests) == row.draft_power_w
        for curves, mj in ((NOTE25_PLAIN, row.plain_mj_per_token), (NOTE25_DRAFT, row.draft_mj_per_token)):
            ratio = curves.power_w.at(row.requests) / curves.tok_s.at(row.requests) * 1000
            assert ratio == pytest.approx(mj, abs=1.0)


def test_interpolation_is_monotone_between_points_and_clamped_outside() -> None:
    for curve in (NOTE25_PLAIN.tok_s, NOTE25_PLAIN.power_w, NOTE25_DRAFT.tok_s, NOTE25_DRAFT.power_w):
        for (b0, v0), (b1, v1) in zip(
            zip(curve.batches, curve.values), zip(curve.batches[1:], curve.values[1:])
        ):
            lo, hi = min(v0, v1), max(v0, v1)
            xs = [b0 + (b1 - b0) * k / 50 for k in range(51)]
            ys = [curve.at(x) for x in xs]
            assert all(lo - 1e-9 <= y <= hi + 1e-9 for y in ys)
            steps = [y1 - y0 for y0, y1 in zip(ys, ys[1:])]
            assert all(s >= -1e-9 for s in steps) or all(s <= 1e-9 for s in steps)
        assert curve.at(0.5) == curve.values[0] and curve.at(40) == curve.values[-1]
    with pytest.raises(ValueError):
        Curve((1, 1), (2.0, 3.0))


def test_crossover_lies_between_two_and_four() -> None:
    def ratio(b: float) -> float:
        draft = NOTE25_DRAFT.power_w.at(b) / NOTE25_DRAFT.tok_s.at(b)
        return draft / (NOTE25_PLAIN.power_w.at(b) / NOTE25_PLAIN.tok_s.at(b))

    assert ratio(2) < 1 < ratio(4)
    crossing = [b / 10 for b in range(20, 41) if ratio(b / 10) >= 1][0]
    assert 2 < crossing <= 4


def test_profiles_by_name_and_forced_class() -> None:
    assert get_profile("note25") is NOTE25
    assert get_profile("classes").prompt_class("Please refactor this module").name == "edit"
    assert get_profile("classes").prompt_class("Implement a function in Python").name == "code"
    assert get_profile("classes").prompt_class("A poem about rain").name == "prose"
    assert get_profile("classes:code").prompt_class("A poem about rain").name == "code"
    with pytest.raises(KeyError):
        get_profile("nope")
    # seed 001 (collectors/docs/draft-strategies.md), one request: draft-4 107.0 tok/s at 302.0 mJ/token
    code = CLASSES.class_named("code")
    assert code.draft.tok_s.at(1) == pytest.approx(107.0)
    assert code.draft.power_w.at(1) / code.draft.tok_s.at(1) * 1000 == pytest.approx(302.0)


@pytest.mark.parametrize("acceptance", [0.45, 0.705, 0.99])
def test_draft_sampler_keeps_acceptance_within_a_few_tokens(acceptance: float) -> None:
    for key in range(30):
        sampler = DraftSampler(key, NOTE25.draft.length_probs, acceptance)
        drafted = accepted = 0
        for _ in range(40):
            d, a = sampler.next(4)
            assert 0 <= a <= d <= 4
            drafted, accepted = drafted + d, accepted + a
        assert abs(accepted - acceptance * drafted) <= 2.0 + 1e-9
    assert NOTE25_ACCEPTANCE_RANGE[0] < NOTE25.classes[0].acceptance < NOTE25_ACCEPTANCE_RANGE[1]
    p = solve_position_acceptance((0, 0, 0, 0, 1.0), 0.5)
    assert (p + p**2 + p**3 + p**4) / 4 == pytest.approx(0.5)


def test_sampler_respects_the_cap_and_text_is_deterministic() -> None:
    sampler = DraftSampler(1, NOTE25.draft.length_probs, 0.7)
    assert sampler.next(0) == (0, 0)
    assert all(sampler.next(2)[0] <= 2 for _ in range(50))
    a, b = TokenStream("same prompt"), TokenStream("same prompt")
    assert [a.next() for _ in range(50)] == [b.next() for _ in range(50)]
    assert tokenize("the power supply")[0] == 1 and len(tokenize("the power supply")) == 4
    random.seed(0)  # the streams do not use the global generator
    assert TokenStream("same prompt").next() == TokenStream("same prompt").next()
