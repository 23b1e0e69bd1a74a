"""The summary's open-loop table (collectors/sweep/open_loop_summary.py): a row per offered rate,
its crossover read on plain's achieved mean concurrency, and every rendering saying which load a
figure came from. Rows are made by hand: note 25's figures (tests/support/sweep_rows.py) at rates
whose plain points had 1, 2 and 4 requests in flight on average, so the open-loop crossover must be
the closed-loop one worked out in test_summary.py (≈ 3.26, between 2 and 4)."""

from __future__ import annotations

import pytest

from collectors.sweep import sentences, summary, tables
from collectors.sweep.records import PairedSummary
from tests.support.sweep_rows import note25_rows, points, rate_rows


def test_open_loop_crossover_is_read_on_plain_s_achieved_concurrency():
    record = summary.summary_of(points(rate_rows()))
    assert isinstance(record, PairedSummary) and record.rows == ()  # no closed-loop point
    open_loop = record.open_loop
    assert open_loop is not None
    assert [(t.rate_rps, t.plain_in_flight.mean, t.draft_in_flight.mean) for t in open_loop.rows] == [
        (0.5, 1.0, 2.0),
        (1.0, 2.0, 3.0),
        (2.0, 4.0, 5.0),
    ]
    # the ratios are note 25's at 1, 2, 4: 1.03, 0.71, 1.12 (test_summary.py), so on plain's
    # concurrency the crossover is note 25's: 1.0 crossed at 3.26 between 2 and 4
    cross = open_loop.crossover
    assert cross is not None and (cross.below, cross.above) == (2, 4)
    assert cross.batch_at_1 == pytest.approx(3.26, abs=0.02)
    assert open_loop.recommendation == "draft at ≤ 2 concurrent requests, turn it off from 4"
    assert [t.verdict.value for t in open_loop.rows] == ["even", "saves", "costs"]


def test_closed_loop_figures_are_the_same_beside_open_loop_points():
    alone = summary.summary_of(points(note25_rows()))
    both = summary.summary_of(points(note25_rows() + rate_rows()))
    assert isinstance(both, PairedSummary) and isinstance(alone, PairedSummary)
    assert both.rows == alone.rows and both.crossover == alone.crossover
    assert both.recommendation == alone.recommendation and alone.open_loop is None
    assert both.points == alone.points + 9


def test_every_rendering_says_which_load_a_figure_came_from():
    record = summary.summary_of(points(note25_rows() + rate_rows()))
    md = sentences.to_markdown(record)
    closed_at, open_at = md.index("closed-loop load: B requests at once"), md.index("open-loop load:")
    assert closed_at < md.index("| 2 | 100.2 | 125.5 |") < open_at
    # rate 1/s: plain 2 in flight (p50/p90/max 2/2/2), draft 3; note 25's B=2 figures
    assert (
        "| 1 | poisson | 2.00/3.00 | 2/2/2 | 3/3/3 | 100.2 | 125.5 | 1.25x | 390 | 279 | 0.71x | 70 % | saves |"
        in md
    )
    assert "Closed-loop load: B requests at once, B = 1, 2, 4, 8, 16." in md
    assert "Open-loop load: poisson arrivals at 0.5, 1, 2 requests/s" in md
    assert "Open-loop recommendation: draft at ≤ 2 concurrent requests, turn it off from 4." in md
    csv = tables.to_table_csv(record).splitlines()
    assert csv[0].startswith("load,rate_rps,arrivals,plain_in_flight_mean,draft_in_flight_mean,batch,")
    assert csv[1].startswith("closed,,,,,1,") and csv[6].startswith("open,0.5,poisson,1.0,2.0,,")
    assert len(csv) == 1 + 5 + 3


def test_a_run_without_open_loop_points_renders_as_before():
    record = summary.summary_of(points(note25_rows()))
    md = sentences.to_markdown(record)
    assert md.startswith("| requests |") and "loop" not in md
    assert tables.to_table_csv(record).startswith("batch,")


def test_a_drifting_rate_is_left_out_alone():
    # plain drifted at 1/s: that rate's points are out (pass-wide), not those at other rates, nor
    # the closed-loop points of the same pass
    rows = rate_rows()
    for r in rows:
        if r["load"]["rate_rps"] == 1.0 and r["phase"] == "after":
            r["flags"] = [{"code": "plain-drift", "message": "plain-drift"}]
    record = summary.summary_of(points(note25_rows() + rows))
    assert isinstance(record, PairedSummary) and record.open_loop is not None
    assert [t.trusted for t in record.open_loop.rows] == [True, False, True]
    assert all(t.trusted for t in record.rows)
    # 1.03 (break-even) at 1 in flight, then 1.12 (costs) at 4, 2 left out
    assert record.open_loop.recommendation == "draft at ≤ 1 concurrent request, turn it off from 4"
    assert record.open_loop.crossover is not None and record.open_loop.crossover.below == 1
    md = sentences.to_markdown(record)
    assert "No trustworthy pair at 1/s: plain-drift (its ratios are shown in parentheses, not used)." in md
