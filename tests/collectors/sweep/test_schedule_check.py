"""The multi-arm summary with a scheduled and a K = 0 arm, on hand-made points: batch by batch the
scheduled arm against the lower envelope of plain and always-draft, K = 0's cost against plain,
and the verdict over a load. Every figure is worked out by hand from the rows below (note 25's
tok/s and W for plain and draft; the scheduled arm drafting at 1 and 2 and K = 0 from 4)."""

from __future__ import annotations

import pytest

from collectors.sweep import checks
from collectors.sweep.schedule_check import WALKING_LOAD, check_summary, verify_over_load
from collectors.sweep.sentences import arms_sentences, to_markdown
from tests.support.schedule_rows import FIGURES, summary_of
from tests.support.sweep_rows import fine_point


def test_each_batch_against_the_envelope_and_k0_against_plain() -> None:
    checks = {c.batch: c for c in summary_of().schedule}
    assert sorted(checks) == [1, 2, 4, 8, 16]
    # B=1: plain 370.0 < draft 380.6 (the envelope is plain); scheduled drafts: 380.6 / 370.0 = +2.9 %
    assert checks[1].envelope_arm == "plain"
    assert checks[1].above_envelope == pytest.approx((29.8 / 78.3) / (22.9 / 61.9) - 1)
    assert checks[1].within_band
    # B=2: draft 278.9 is the envelope and the scheduled arm is it
    assert checks[2].envelope_arm == "draft" and checks[2].above_envelope == pytest.approx(0, abs=1e-9)
    # B=8: 33.49 / 305.1 = 109.8 against plain 108.8: +0.9 %
    assert checks[8].envelope_arm == "plain"
    assert checks[8].above_envelope == pytest.approx((33.49 / 305.1) / (36.9 / 339.2) - 1)
    assert all(c.within_band for c in checks.values())
    # K = 0 at 8: time per token 339.2 / 305.1 = +11.2 %, energy +0.9 %
    assert checks[8].k0_time_cost == pytest.approx(339.2 / 305.1 - 1)
    assert checks[8].k0_energy_cost == pytest.approx((33.49 / 305.1) / (36.9 / 339.2) - 1)


def test_the_sentences_say_it_batch_by_batch_in_the_cli_and_summary_md() -> None:
    record = summary_of()
    lines = arms_sentences(record)
    assert "Scheduled power at B=8: 109.8 mJ/token, +0.9 % above (plain 108.8): within the band." in lines
    assert (
        "Scheduled power at B=2: 278.9 mJ/token, at or below the envelope (draft 278.9): within the band."
        in lines
    )
    assert "K = 0 power at B=8: +0.9 % energy and +11.2 % time per token against plain." in lines
    assert "K = 0 power at B=8: +0.9 % energy and +11.2 % time per token against plain." in to_markdown(
        record
    )


def test_verified_over_the_walking_load() -> None:
    # equal time at 1, 2, 4, 8, 16, 8, 4, 2: sum(W) / sum(tok/s) per arm
    # plain 288.8 / 1702.3 = 169.65, draft 286.7 / 1444.8 = 198.44, scheduled 270.90 / 1625.0 = 166.71
    result = verify_over_load(summary_of(), WALKING_LOAD)
    assert result.plain_mj_per_token == pytest.approx(1000 * 288.8 / 1702.3)
    assert result.always_mj_per_token == pytest.approx(1000 * 286.7 / 1444.8)
    assert result.scheduled_mj_per_token == pytest.approx(1000 * 270.90 / 1625.0)
    assert result.verified
    assert result.line == (
        "verified: the schedule saves 16.0 % against always-draft and 1.7 % against plain over this load"
    )


def test_not_verified_when_a_batch_sits_above_the_band_or_nothing_is_saved() -> None:
    # a K = 0 that costs 2.5x the step at 16 (another backend's published figure): 377 / 2.5 tok/s
    costly = {**FIGURES, 16: {**FIGURES[16], "scheduled": (150.8, 36.0), "k0": (150.8, 36.0)}}
    result = verify_over_load(summary_of(costly), WALKING_LOAD)
    assert not result.verified and result.above_band == (16,)
    assert result.line.startswith("not verified: the scheduled arm sits above the lower envelope")
    assert result.line.endswith("by more than the 5 % band at B=16")
    # a load that is all at 16 requests, where the schedule is K = 0 at +1.1 %: saves nothing on plain
    only_16 = verify_over_load(summary_of(), {16: 1.0})
    assert (
        only_16.line.startswith("not verified: over this load the schedule costs")
        and "+1.1 % against plain" in only_16.line
    )


def test_drafting_nothing_is_what_k0_and_an_off_schedule_do_not_a_void_point() -> None:
    # an always-draft arm that drafted nothing measured plain decoding: void; the k0 arm and the
    # scheduled arm above its crossover draft nothing by design
    assert [f.code for f in checks.drafting_flags(fine_point(arm="draft", drafted=0))] == ["void"]
    assert checks.drafting_flags(fine_point(arm="k0", drafted=0)) == []
    assert checks.drafting_flags(fine_point(arm="scheduled", drafted=0)) == []


def test_the_sweep_tabs_one_line() -> None:
    # K = 0's time per token over the five batches: 58.1 at 1 against 61.9 is +6.5 %; at 16,
    # 377.0 / 332.3 is +13.5 %, the most
    assert check_summary(summary_of().schedule or ()) == (
        "Scheduled: within the band at B=1, 2, 4, 8, 16; K = 0 costs +6.5 % to +13.5 % time per token against plain."
    )
    costly = {**FIGURES, 16: {**FIGURES[16], "scheduled": (150.8, 36.0), "k0": (150.8, 36.0)}}
    assert (check_summary(summary_of(costly).schedule or ()) or "").startswith(
        "Scheduled: ABOVE the envelope's band at B=16;"
    )


def test_a_token_share_profile_weighs_each_batchs_mj_per_token() -> None:
    # spectop tune's --profile form: half the tokens at 2 requests, half at 16:
    # scheduled (278.9 + 96.3) / 2 = 187.6, always-draft (278.9 + 113.9) / 2 = 196.4, plain (390.2 + 95.2) / 2 = 242.7
    result = verify_over_load(summary_of(), {2: 0.5, 16: 0.5}, by_tokens=True)
    assert result.scheduled_mj_per_token == pytest.approx((1000 * 35.0 / 125.5 + 1000 * 32.0 / 332.3) / 2)
    assert result.always_mj_per_token == pytest.approx((1000 * 35.0 / 125.5 + 1000 * 37.5 / 329.1) / 2)
    assert result.plain_mj_per_token == pytest.approx((1000 * 39.1 / 100.2 + 1000 * 35.9 / 377.0) / 2)
    assert result.line == (
        "verified: the schedule saves 4.5 % against always-draft and 22.7 % against plain over this load"
    )
