"""An arm's aggregate worked by hand: the totals it reports, net of idle, the median concurrency,
width, the lower bound that only an uncovered window has, and an arm with no points or no tokens."""

from __future__ import annotations

import pytest

from collectors.sweep import summary
from collectors.sweep.checks import EXCLUDING
from collectors.sweep.codec import to_json
from collectors.sweep.rule import EVEN_BAND
from collectors.sweep.store import RunStore
from tests.support.sweep_rows import as_point, note25_rows, points, row, run_meta


def two_draft_points():
    # note 25's draft arm at B=2 twice: 125.5 tok/s at 35.0 W for 10 s, so 1255 tokens and 350 J each
    a = row(2, "draft", 125.5, 35.0, drafted=400, accepted=280, steps=200)
    b = row(2, "draft", 125.5, 35.0, drafted=400, accepted=280, steps=200)
    a.update(net_energy_j=150.0, energy_window_s=10.5, concurrency_mean=2.0)
    b.update(net_energy_j=100.0, energy_window_s=9.5, concurrency_mean=1.5)
    return [a, b]


def test_an_arms_totals_net_energy_width_and_concurrency():
    agg = to_json(summary.aggregate(points(two_draft_points())))
    # 2 x 1255 tokens over 2 x 10 s; the meter measured 10.5 + 9.5 = 20 s
    assert (agg["tokens"], agg["duration_s"], agg["energy_s"]) == (2510, pytest.approx(20.0), 20.0)
    assert agg["tok_s"] == pytest.approx(125.5) and agg["power_w"] == pytest.approx(35.0)
    # net: (150 + 100) J over 2510 tokens = 99.6 mJ/token (gross 700 J: 278.9)
    assert agg["net_mj_per_token"] == pytest.approx(1000 * 250 / 2510)
    assert agg["mj_per_token"] == pytest.approx(1000 * 700 / 2510)
    # width: 1 + 800 drafted / 400 steps = 3.0; G: 1 + 560 / 400 = 2.4
    assert agg["verified_width"] == pytest.approx(3.0) and agg["mean_advance"] == pytest.approx(2.4)
    # the median of the points' mean concurrency (1.5, 2.0), not their last or their sum
    assert agg["concurrency_mean"] == pytest.approx(1.75)
    # a covered window is a value, so no "at least" figures
    assert (agg["energy_j_at_least"], agg["power_w_at_least"], agg["mj_per_token_at_least"]) == (None,) * 3


def test_concurrency_is_unknown_when_no_point_measured_it():
    rows = two_draft_points()
    for r in rows:
        r["concurrency_mean"] = None
    assert to_json(summary.aggregate(points(rows)))["concurrency_mean"] is None
    rows[0]["concurrency_mean"] = 3.0  # one known: it is the median
    assert to_json(summary.aggregate(points(rows)))["concurrency_mean"] == 3.0


def test_an_uncovered_window_has_no_net_figure():
    rows = two_draft_points()
    rows[1]["energy_covered"] = False
    agg = to_json(summary.aggregate(points(rows)))
    assert agg["net_mj_per_token"] is None and agg["mj_per_token"] is None
    assert agg["mj_per_token_at_least"] == pytest.approx(1000 * 700 / 2510)


def test_an_arm_with_no_points_or_no_tokens_has_no_rates():
    empty = to_json(summary.aggregate(points([]), trusted=False))
    assert (empty["tokens"], empty["duration_s"], empty["energy_s"]) == (0, 0.0, 0)
    assert (empty["tok_s"], empty["power_w"], empty["mj_per_token"]) == (None, None, None)
    # every request failed: 0 tokens over 10 s at 30 W, so 0 tok/s and no mJ/token (not 300 J per token)
    failed = row(4, "plain", 1.0, 30.0)
    failed.update(committed_tokens=0, window_s=10.0, energy_j=300.0)
    agg = to_json(summary.aggregate(points([failed])))
    assert agg["tokens"] == 0 and agg["tok_s"] == 0.0 and agg["mj_per_token"] is None


def test_the_summary_carries_the_plan_the_idle_baseline_and_the_rule():
    rows = note25_rows()  # 15 points
    rows[1]["idle_w"], rows[4]["idle_w"] = 11.0, 13.0
    short = {"code": "idle-short", "message": "m"}
    rows[3]["idle_flag"] = short
    s = summary.summarize(points(rows), run_meta({"planned_points": 30, "idle_w": 12.5}))
    assert (s["points"], s["planned_points"], s["idle_w"], s["idle_flag"]) == (15, 30, 12.5, short)
    assert s["rule"] == {"even_band": EVEN_BAND, "excluding_flags": sorted(EXCLUDING)}
    # without the run's meta: the first point that recorded the baseline
    assert (
        summary.summarize(points(rows))["idle_w"] == 11.0
        and summary.summarize(points(rows))["planned_points"] is None
    )


def test_net_energy_ratio_and_why_a_batch_has_no_pair():
    plain = row(1, "plain", 61.9, 22.9)  # 619 tokens, 229 J
    draft = row(1, "draft", 78.3, 29.8, drafted=400, accepted=280, steps=200)  # 783 tokens, 298 J
    plain["net_energy_j"], draft["net_energy_j"] = 129.0, 198.0  # 10 s at a 10 W idle off each
    del plain["flags"]  # rows saved before flags were recorded count, with none
    s = summary.summarize(points([plain, draft]))
    assert s["rows"][0]["net_energy_ratio"] == pytest.approx((198 / 783) / (129 / 619))
    assert s["flags"] == [] and s["rows"][0]["trusted"] and s["rows"][0]["untrusted_because"] == []
    # no energy at all (no meter): no pair, and the batch says so
    for r in (plain, draft):
        r["energy_j"] = None
    t = summary.summarize(points([plain, draft]))["rows"][0]
    assert not t["trusted"] and t["untrusted_because"] == ["no energy measured"]


def test_a_rewritten_summary_reads_the_runs_meta(tmp_path):
    store = RunStore(tmp_path)
    store.write_meta({"planned_points": 30, "idle_w": 12.5})
    for r in note25_rows():
        store.append_point(as_point(r))
    result = to_json(summary.rewrite_summary(tmp_path))
    assert (result["planned_points"], result["idle_w"]) == (30, 12.5)
