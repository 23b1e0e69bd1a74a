"""`derive_schedule`: the lowest-energy draft length per batch of a saved sweep, with the band's
decisions left as always-draft had them. Truths are worked by hand from the runs' mJ/token cells
(tests/collectors/tune/runs.py; note 25's from collectors/docs/note25.md)."""

from __future__ import annotations

import pytest

from collectors.errors import SpectopError
from collectors.sweep.request import SavedRun
from collectors.sweep.summary import summarize_saved
from collectors.tune.derive import derive_schedule
from tests.support.sweep_rows import flagged, note25_rows
from tests.support.tune_runs import ARMS_MJ, DATA, arms_rows, arms_run, note25_run


def test_note25_drafts_up_to_two_requests_and_is_off_from_four(tmp_path):
    schedule = derive_schedule(note25_run(tmp_path / "run"), draft_tokens=4)
    # ratios 1.03, 0.71, 1.12, 1.50, 1.20: draft where it saves or breaks even, off where it costs
    assert [(lv.batch, lv.k) for lv in schedule.levels] == [(1, 4), (2, 4), (4, 0), (8, 0), (16, 0)]
    # at one request plain is cheaper (370 against 381 mJ) but by 3 %, inside the ±5 % band: kept
    assert schedule.kept_in_band == (1,)
    assert schedule.levels[0].plain_mj_per_token == pytest.approx(370, abs=1.5)
    assert schedule.levels[0].mj_per_token == pytest.approx(381, abs=1.5)
    assert (schedule.crossover.below, schedule.crossover.above) == (2, 4)
    assert (schedule.always_arm, schedule.always_k, schedule.max_k) == ("draft", 4, 4)
    assert schedule.source.endswith("run") and schedule.left_out == ()


@pytest.mark.parametrize(
    ("batch", "k"),
    # the level at or below: 3 runs as 2 does, 5-7 as 4, anything past 16 as 16
    [(1, 4), (2, 4), (3, 4), (4, 0), (7, 0), (16, 0), (500, 0)],
)
def test_k_at_any_runtime_batch_is_the_level_at_or_below(tmp_path, batch, k):
    schedule = derive_schedule(note25_run(tmp_path / "run"), draft_tokens=4)
    assert schedule.k_at(batch) == k


def test_a_batch_without_a_trustworthy_pair_keeps_always_draft_below_the_crossover(tmp_path):
    rows = flagged(flagged(note25_rows(), 2, "plain", "plain-drift"), 8, "plain", "plain-drift")
    schedule = derive_schedule(note25_run(tmp_path / "run", rows), draft_tokens=4)
    # left: 1.03 (even), 1.12, 1.20 (costs): draft at ≤ 1, off from 4. B=2 lies below 4, so it
    # keeps always-draft's 4; B=8 lies above, so it is off; neither was measured trustworthily
    assert (schedule.crossover.below, schedule.crossover.above) == (1, 4)
    untrusted = {lv.batch: lv.k for lv in schedule.levels if not lv.trusted}
    assert untrusted == {2: 4, 8: 0}


def test_a_saved_run_object_gives_the_same_schedule(tmp_path):
    folder = note25_run(tmp_path / "run")
    saved = SavedRun(folder, summarize_saved(folder))
    assert derive_schedule(saved, draft_tokens=4) == derive_schedule(folder, draft_tokens=4)


def test_multi_arm_picks_the_cheapest_length_per_batch(tmp_path):
    schedule = derive_schedule(arms_run(tmp_path / "run"))
    # always-draft is the best fixed length: geometric mean of its ratios to plain
    # draft-2: 0.75, 0.825, 1.025, 1.5 -> mean log -0.0127; draft-4: 0.625, 0.85, 1.15, 1.6 -> -0.0057
    assert (schedule.always_arm, schedule.always_k) == ("draft-2", 2)
    # B=1: draft-4 250 < 300 / 1.05, so 4; B=2: draft-2 itself is cheapest; B=4: plain 200 is
    # cheapest but draft-2's 205 is within 5 % of it, so draft-2 is kept; B=8: plain 100, draft-2 150
    assert [(lv.batch, lv.k, lv.arm) for lv in schedule.levels] == [
        (1, 4, "draft-4"),
        (2, 2, "draft-2"),
        (4, 2, "draft-2"),
        (8, 0, "plain"),
    ]
    assert schedule.kept_in_band == (4,)
    # the lowest ratio per batch, 0.625, 0.825, 1.025, 1.5, leaves the band upward between 4 and 8
    assert (schedule.crossover.below, schedule.crossover.above) == (4, 8)
    assert schedule.left_out == ("ngram",)  # n-gram copying has no draft length to schedule
    assert [schedule.k_at(b) for b in (1, 3, 5, 16)] == [4, 2, 2, 0]


def test_one_class_of_several(tmp_path):
    # "code" has the same cells as the main run; "prose" drafts nowhere profitably (all arms 3x plain)
    costly = {
        arm: {b: mj * (1 if arm == "plain" else 3) for b, mj in cells.items()}
        for arm, cells in ARMS_MJ.items()
    }
    rows = arms_rows(ARMS_MJ, "code") + arms_rows(costly, "prose")
    folder = arms_run(tmp_path / "run", rows, classes=("code", "prose"))
    assert [lv.k for lv in derive_schedule(folder, prompt_class="code").levels] == [4, 2, 2, 0]
    with pytest.raises(SpectopError, match="no crossover"):
        derive_schedule(folder, prompt_class="prose")  # drafting costs at every batch
    with pytest.raises(SpectopError, match="no prompt class 'edit'"):
        derive_schedule(folder, prompt_class="edit")


def test_a_run_without_a_crossover_says_what_its_sweep_recommended():
    with pytest.raises(SpectopError) as caught:
        derive_schedule(DATA / "paired-20261201T223229Z", draft_tokens=4)
    assert "no crossover" in caught.value.what
    assert "costs energy up to 1 concurrent request and pays from 2" in caught.value.what


def test_a_paired_run_whose_draft_length_is_unknown_asks_for_it(tmp_path):
    with pytest.raises(SpectopError) as caught:
        derive_schedule(note25_run(tmp_path / "run"))
    assert "--draft-tokens" in caught.value.fix


def test_a_run_with_no_draft_length_arm_is_refused(tmp_path):
    rows = [r for r in arms_rows(ARMS_MJ) if r["arm"] in ("plain", "ngram")]
    with pytest.raises(SpectopError, match="no draft arm"):
        derive_schedule(arms_run(tmp_path / "run", rows))
