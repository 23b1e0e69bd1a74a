"""One rule reads the energy ratios: the crossover and the recommendation never contradict.

Expected figures are worked by hand from the tables below; the band is note 25's 5 %
(collectors/docs/note25.md, collectors/docs/sweep.md).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.sweep.codec import from_json, to_json
from collectors.sweep.rule import EVEN_BAND, Crossover, classify, judge, upward_exits

KEEP_ON = "drafting saves energy or breaks even at every measured batch (1–4 concurrent requests): keep it on"


def test_the_issues_table_has_no_crossover_beside_keep_it_on():
    # 1.02 and 1.04 break even, so drafting is worth it everywhere; the ratio crossing 1.0 between
    # 1 and 2 (≈ 1.88) is no crossover of the rule
    verdict = judge([(1, 0.8), (2, 1.02), (4, 1.04)])
    assert verdict.recommendation == KEEP_ON
    assert verdict.crossover is None


@pytest.mark.parametrize(
    ("ratios", "says", "bracket"),
    [
        # all below the band
        (
            [(1, 0.7), (2, 0.8), (4, 0.9)],
            "drafting saves energy at every measured batch (1–4 concurrent requests): keep it on",
            None,
        ),
        # all above it
        (
            [(1, 1.1), (2, 1.2), (4, 1.3)],
            "drafting costs energy at every measured batch (1–4 concurrent requests): turn it off",
            None,
        ),
        # dips back under the band after leaving it: no clean crossover, and none reported
        (
            [(1, 0.8), (2, 1.2), (4, 0.9)],
            "drafting pays at 1, 4 and costs at 2 concurrent requests: no clean crossover, re-run with more passes",
            None,
        ),
        # costs at low batch, pays at high: the ratio never rises out of the band
        ([(1, 1.1), (8, 0.9)], "drafting costs energy up to 1 concurrent request and pays from 8", None),
        # exactly at the band's top edge: break-even, so still worth drafting
        ([(1, 0.9), (2, 1.05), (4, 1.2)], "draft at ≤ 2 concurrent requests, turn it off from 4", (2, 4)),
        # just past it: costs
        ([(1, 0.9), (2, 1.0501), (4, 1.2)], "draft at ≤ 1 concurrent request, turn it off from 2", (1, 2)),
        # exactly at the bottom edge: breaks even, does not save
        ([(1, 0.95), (2, 0.9), (4, 0.8)], KEEP_ON, None),
        # note 25: 1.03 at one request breaks even (and is 1.26x faster)
        (
            [(1, 1.03), (2, 0.71), (4, 1.12), (8, 1.50), (16, 1.20)],
            "draft at ≤ 2 concurrent requests, turn it off from 4",
            (2, 4),
        ),
        ([], "no valid paired points: nothing to recommend", None),
    ],
)
def test_hand_made_tables(ratios, says, bracket):
    verdict = judge(ratios)
    assert verdict.recommendation == says
    if bracket is None:
        assert verdict.crossover is None
    else:
        assert (verdict.crossover.below, verdict.crossover.above) == bracket


def test_the_crossover_is_where_the_ratio_rises_through_1_with_the_band_around_it_in_log_batch():
    # the issue's complaint: the crossover was put where the ratio rose through 1.05, not 1.0.
    # By hand, linear in log B (not in B): 0.98 at 2 and 1.20 at 4, a level L lies
    # (L - 0.98) / 0.22 of the way from log 2 to log 4: 1.0 at 2 * 2 ** (0.02 / 0.22) = 2.13
    # (linear in B it would be 2.18), 1.05 at 2 * 2 ** (0.07 / 0.22) = 2.49; 0.95 lies between 1
    # (0.80) and 2 (0.98), (0.95 - 0.80) / 0.18 of the way: 2 ** (0.15 / 0.18) = 1.78
    cross = judge([(1, 0.80), (2, 0.98), (4, 1.20)]).crossover
    assert cross == Crossover(
        below=2, above=4, batch_at_1=2.13, band_low=1.78, band_high=2.49, lowest_batch=1, even_band=0.05
    )
    # note 25: 0.71 at 2, 1.12 at 4: 1.0 at 2 * 2 ** (0.29 / 0.41) = 3.27, the band 3.00 to 3.55
    note25 = judge([(1, 1.03), (2, 0.71), (4, 1.12)]).crossover
    assert (note25.batch_at_1, note25.band_low, note25.band_high) == pytest.approx(
        (3.27, 3.00, 3.55), abs=0.01
    )
    # a ratio exactly at a level is its crossing
    assert judge([(1, 0.9), (2, 1.05), (4, 1.2)]).crossover.band_high == pytest.approx(2.0)
    assert judge([(1, 0.9), (2, 1.0), (4, 1.2)]).crossover.batch_at_1 == pytest.approx(2.0)


def test_a_ratio_above_1_from_the_smallest_batch_puts_the_crossing_at_or_below_it():
    # 1.02 at 1 breaks even but is already above 1.0 (and above 0.95): no crossing of either lies
    # among the batches, so they are None and the crossing is "≤ 1"; 1.05 between 2 (1.04) and 4
    # (1.30): 2 * 2 ** (0.01 / 0.26) = 2.05
    cross = judge([(1, 1.02), (2, 1.04), (4, 1.30)]).crossover
    assert (cross.batch_at_1, cross.band_low, cross.band_high, cross.lowest_batch) == (None, None, 2.05, 1)
    # 0.97 at 1 is above 0.95 but below 1.0: 1.0 between 1 and 2 (1.02), 2 ** (0.03 / 0.05) = 1.52
    cross = judge([(1, 0.97), (2, 1.02), (4, 1.30)]).crossover
    assert (cross.batch_at_1, cross.band_low) == (1.52, None)


def test_the_crossing_through_1_is_the_last_rise_before_the_exit():
    # note 25's shape: 1.03 at 1 falls to 0.71 at 2, then rises: the crossing is the rise between 2
    # and 4, not the fall between 1 and 2
    cross = judge([(1, 1.03), (2, 0.71), (4, 1.12), (8, 1.50)]).crossover
    assert 2 < cross.batch_at_1 < 4 and cross.lowest_batch == 1


def test_a_crossover_goes_to_json_and_back_and_an_old_one_is_judged_again():
    cross = judge([(1, 0.80), (2, 0.98), (4, 1.20)]).crossover
    form = to_json(cross)
    assert form == {
        "below": 2,
        "above": 4,
        "batch_at_1": 2.13,
        "band_low": 1.78,
        "band_high": 2.49,
        "lowest_batch": 1,
        "even_band": 0.05,
    }
    assert from_json(Crossover, form) == cross


def test_classify_at_the_edges():
    assert [classify(r) for r in (0.9499, 0.95, 1.0, 1.05, 1.0501)] == [
        "saves",
        "even",
        "even",
        "even",
        "costs",
    ]
    assert EVEN_BAND == 0.05


batches = st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 32]), min_size=1, max_size=6, unique=True)


@given(
    batches.flatmap(
        lambda bs: st.tuples(
            st.just(sorted(bs)), st.lists(st.floats(0.5, 1.6), min_size=len(bs), max_size=len(bs))
        )
    )
)
def test_crossover_and_recommendation_never_contradict(table):
    bs, rs = table
    ratios = list(zip(bs, rs))
    verdict = judge(ratios)
    cross = verdict.crossover
    if cross is None:
        assert "turn it off from" not in verdict.recommendation
        return
    below, above = cross.below, cross.above
    assert verdict.recommendation.startswith(f"draft at ≤ {below} concurrent request")
    assert verdict.recommendation.endswith(f"turn it off from {above}")
    # every batch up to `below` is worth drafting by the rule, every one from `above` costs
    assert all(classify(r) != "costs" for b, r in ratios if b <= below)
    assert all(classify(r) == "costs" for b, r in ratios if b >= above)
    assert below <= cross.band_high <= above
    # the band's top lies on the log-B line between the two, at the band's edge
    by_batch = dict(ratios)
    share = (math.log(cross.band_high) - math.log(below)) / (math.log(above) - math.log(below))
    assert by_batch[below] + share * (by_batch[above] - by_batch[below]) == pytest.approx(1.05, abs=0.01)
    # the crossings come in order: the band's bottom, 1.0, the band's top, none past `above`
    known = [x for x in (cross.band_low, cross.batch_at_1, cross.band_high) if x is not None]
    assert known == sorted(known) and cross.lowest_batch <= known[0] <= above
    # from the 1.0 crossing on, every measured ratio is above 1.0, up to `above`
    if cross.batch_at_1 is not None:
        assert all(r > 1.0 for b, r in ratios if cross.batch_at_1 < b <= above)
    else:
        assert all(r > 1.0 for b, r in ratios if cross.lowest_batch <= b <= above)


def test_a_lone_exit_from_the_band_is_refined_even_without_a_clean_crossover():
    from collectors.sweep.plan import SweepPlan
    from collectors.sweep.runner import refinement
    from tests.support.sweep_rows import note25_rows, points

    rows = note25_rows()
    # a noisy one-request point reading 1.07: the table has no clean crossover any more, but the
    # ratio still leaves the band once, between 2 and 4, so the sweep measures 3
    for r in rows:
        if r["batch"] == 1 and r["arm"] == "draft":
            r["energy_j"] *= 1.07 / 1.03
    assert judge([(1, 1.07), (2, 0.71), (4, 1.12)]).crossover is None
    assert [k.batch for k in refinement(SweepPlan(refine=True), points(rows))] == [3, 3, 3]
    # two exits (the ratio dips back under the band at 8 and leaves it again at 16): no refinement
    assert len(upward_exits([(1, 0.9), (2, 1.2), (4, 0.9), (8, 1.2)])) == 2
    dips = note25_rows()
    for r in dips:
        if r["arm"] == "draft" and r["batch"] == 8:
            r["energy_j"] *= 0.9 / 1.5
    assert refinement(SweepPlan(refine=True), points(dips)) == []


def test_a_refined_batch_that_drifted_in_the_grid_is_measured_again_and_trusted():
    from collectors.sweep.plan import SweepPlan
    from collectors.sweep.runner import refinement
    from collectors.sweep.summary import summarize
    from tests.support.sweep_rows import NOTE25, flagged, note25_rows, points, row

    # the grid's plain arm drifted at B=4: 4 is untrusted, and the lone exit of the trusted
    # batches is between 2 (0.71) and 8 (1.50), at log-B share (1.05 - 0.71) / (1.50 - 0.71) = 0.43:
    # B = 2 * 4 ** 0.43 = 3.6, so the batch to measure is 4 again
    rows = flagged(note25_rows(), 4, "plain", "plain-drift", phase="after")
    assert not next(t for t in summarize(points(rows))["rows"] if t["batch"] == 4)["trusted"]
    plan = SweepPlan(refine=True)
    keys = refinement(plan, points(rows))
    assert [k.batch for k in keys] == [4, 4, 4]
    # a pass of its own, past the plan's two: the grid's drift at B=4 must not exclude it
    assert {k.pass_index for k in keys} == {plan.passes} == {2}
    _, p_tok, d_tok, p_w, d_w = NOTE25[2]
    rows += [
        row(4, "plain", p_tok, p_w, phase="before", pass_=keys[0].pass_index),
        row(4, "draft", d_tok, d_w, drafted=400, accepted=280, steps=200, pass_=keys[1].pass_index),
        row(4, "plain", p_tok, p_w, phase="after", pass_=keys[2].pass_index),
    ]
    at4 = next(t for t in summarize(points(rows))["rows"] if t["batch"] == 4)
    # the clean refined triple is trusted, with the grid's drifted pass left out: note 25's
    # (37.1 / 163.4) / (39.0 / 192.3) = 227.1 / 202.8 = 1.12
    assert at4["trusted"] and at4["energy_ratio"] == pytest.approx(1.12, abs=0.005)
    assert at4["excluded_points"] == 3


def test_a_summary_saved_with_the_old_crossover_reads_as_the_rule_gives_it_now():
    from collectors.sweep.records import summary_from_json
    from collectors.sweep.sentences import verdict_sentences
    from collectors.sweep.summary import summarize
    from tests.support.sweep_rows import note25_rows, points

    form = summarize(points(note25_rows()))
    new = summary_from_json(form).crossover
    # summary/2 saved one batch, where the ratio rose through the band's top (3.55); the rows'
    # ratios, (35.0 / 125.5) / (39.1 / 100.2) = 0.7147 at 2 and (37.1 / 163.4) / (39.0 / 192.3) =
    # 1.1195 at 4, cross 1.0 at 2 * 2 ** (0.2853 / 0.4048) = 3.26 (linear in log B)
    form["crossover"] = {"below": 2, "above": 4, "batch": 3.55, "ratio": 1.05}
    old = summary_from_json(form).crossover
    assert old is not None and old == new
    assert old.batch_at_1 == pytest.approx(3.26, abs=0.005) and old.band_high == pytest.approx(
        3.55, abs=0.005
    )
    assert verdict_sentences(summary_from_json(form))[0].startswith(
        "Energy crossover ≈ 3.26 concurrent requests"
    )
