"""One rule reads the energy ratios: the crossover and the recommendation never contradict.

Expected figures are worked by hand from the tables below; the band is note 25's 5 %
(collectors/docs/note25.md, collectors/docs/sweep.md).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.sweep.rule import EVEN_BAND, classify, judge, upward_exits

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
        assert (verdict.crossover["below"], verdict.crossover["above"]) == bracket


def test_the_crossover_is_where_the_ratio_leaves_the_band_in_log_batch():
    # note 25: 0.71 at 2, 1.12 at 4; 1.05 is (1.05 - 0.71) / (1.12 - 0.71) = 0.829 of the way
    # from log 2 to log 4, so B = 2 * 2 ** 0.829 = 3.55
    cross = judge([(1, 1.03), (2, 0.71), (4, 1.12)]).crossover
    assert cross["batch"] == pytest.approx(2 * 2 ** ((1.05 - 0.71) / (1.12 - 0.71)), abs=0.01)
    assert cross["batch"] == pytest.approx(3.55, abs=0.01) and cross["ratio"] == pytest.approx(1.05)
    # a ratio exactly at the edge is the crossover itself
    assert judge([(1, 0.9), (2, 1.05), (4, 1.2)]).crossover["batch"] == pytest.approx(2.0)


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
    below, above = cross["below"], cross["above"]
    assert verdict.recommendation.startswith(f"draft at ≤ {below} concurrent request")
    assert verdict.recommendation.endswith(f"turn it off from {above}")
    # every batch up to `below` is worth drafting by the rule, every one from `above` costs
    assert all(classify(r) != "costs" for b, r in ratios if b <= below)
    assert all(classify(r) == "costs" for b, r in ratios if b >= above)
    assert below <= cross["batch"] <= above
    # the crossover lies on the log-B line between the two, at the band's edge
    by_batch = dict(ratios)
    share = (math.log(cross["batch"]) - math.log(below)) / (math.log(above) - math.log(below))
    assert by_batch[below] + share * (by_batch[above] - by_batch[below]) == pytest.approx(1.05, abs=0.01)


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
