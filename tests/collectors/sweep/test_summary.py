"""The sweep summary reproduces note 25's table (collectors/docs/note25.md) from its own rows, from trustworthy points only.

Expected figures are worked by hand from the rows' joules, seconds and tokens, or are note 25's.
"""

from __future__ import annotations

import json
import math

import pytest

from collectors.sweep import checks, sentences, summary, tables
from collectors.sweep.checks import EXCLUDING, drift_flag, mismatch_flag, point_flags
from collectors.sweep.codec import to_json
from collectors.sweep.records import summary_from_json
from collectors.sweep.store import RunStore
from tests.support.sweep_rows import as_point, flagged, note25_rows, points, row, run_meta
from tests.support.sweep_rows import fine_point as point

EXPECTED = {
    1: (370, 381, 1.03),
    2: (391, 279, 0.71),
    4: (203, 227, 1.12),
    8: (109, 163, 1.50),
    16: (95, 114, 1.20),
}


def by_batch(result):
    return {t["batch"]: t for t in result["rows"]}


def test_note25_table_is_reproduced():
    result = summary.summarize(points(note25_rows()))
    for t in result["rows"]:
        plain_mj, draft_mj, ratio = EXPECTED[t["batch"]]
        assert t["plain"]["mj_per_token"] == pytest.approx(plain_mj, abs=1.5)
        assert t["draft"]["mj_per_token"] == pytest.approx(draft_mj, abs=1.5)
        assert t["energy_ratio"] == pytest.approx(ratio, abs=0.006)
        assert t["draft"]["acceptance"] == pytest.approx(0.70)
        assert t["draft"]["mean_advance"] == pytest.approx(2.4)
        # Eq. 6 holds on every row
        assert t["energy_ratio"] == pytest.approx(t["power_ratio"] / t["speedup"])
        assert t["trusted"]
    assert [t["verdict"] for t in result["rows"]] == ["even", "saves", "costs", "costs", "costs"]
    cross = result["crossover"]
    # linear in log B from (2, 0.71) to (4, 1.12): a level L is (L - 0.71) / (1.12 - 0.71) of the way
    # from log 2 to log 4; 1.0 at 3.26, the band's edges 0.95 and 1.05 at 3.00 and 3.55
    ratio_2, ratio_4 = 279 / 391, 227 / 203

    def through(level: float) -> float:
        return float(2 * 2 ** ((level - ratio_2) / (ratio_4 - ratio_2)))

    assert (cross["below"], cross["above"]) == (2, 4)
    assert cross["batch_at_1"] == pytest.approx(through(1.0), abs=0.02) == pytest.approx(3.26, abs=0.02)
    assert cross["band_low"] == pytest.approx(through(0.95), abs=0.02)
    assert cross["band_high"] == pytest.approx(through(1.05), abs=0.02)
    assert result["recommendation"] == "draft at ≤ 2 concurrent requests, turn it off from 4"
    md = sentences.to_markdown(summary_from_json(result))
    assert "| 2 | 100.2 | 125.5 | 1.25x | 390 | 279 | 0.71x | 39.1 | 35.0 | 70 % |" in md
    assert (
        f"Energy crossover ≈ {cross['batch_at_1']:.3g} concurrent requests, where the draft/plain energy "
        f"ratio rises through 1.0; between {cross['band_low']:.3g} and {cross['band_high']:.3g} within "
        "the ±5 % noise band."
    ) in md


def test_ratios_are_ratios_of_totals_over_passes():
    # two passes: 100 tokens at 1 J and 300 tokens at 9 J; a mean of per-pass ratios would say 20 mJ
    rows = [row(1, "plain", 100, 1.0, seconds=1.0), row(1, "plain", 300, 9.0, seconds=1.0)]
    agg = summary.aggregate(points(rows))
    assert agg.mj_per_token == pytest.approx(1000 * 10.0 / 400)


def test_watts_divide_by_the_seconds_the_energy_was_measured_over():
    # the meter's marks sit just outside the request window: 100 J over 10 s, 300 J over 20 s
    a, b = row(1, "plain", 10, 10.0, seconds=9.0), row(1, "plain", 10, 10.0, seconds=19.0)
    a.update(energy_j=100.0, energy_window_s=10.0)
    b.update(energy_j=300.0, energy_window_s=20.0)
    assert summary.aggregate(points([a])).power_w == pytest.approx(100.0 / 10.0)  # the point's own W
    assert summary.aggregate(points([a, b])).power_w == pytest.approx(400.0 / 30.0)
    assert summary.aggregate(points([a, b])).tok_s == pytest.approx(
        (90 + 190) / 28.0
    )  # tokens over the windows


def test_gap_tails_pool_every_gap_of_the_points():
    # 1000 gaps of 1 ms in one point, 10 of 100 ms in another: under 1 % of all gaps are slow, so
    # the pooled p95 and p99 are 1 ms (a median of per-point p95s would say 50.5, a max of p99s 100)
    a, b = row(4, "draft", 100, 30.0), row(4, "draft", 100, 30.0)
    a["chunk_gaps_ms"], b["chunk_gaps_ms"] = [1.0] * 1000, [100.0] * 10
    agg = summary.aggregate(points([a, b]))
    assert agg.chunk_gap_ms_p95 == pytest.approx(1.0) and agg.chunk_gap_ms_p99 == pytest.approx(1.0)
    b["chunk_gaps_ms"] = [100.0] * 100  # now 9 % are slow: p95 is slow, p90 would not be
    assert summary.aggregate(points([a, b])).chunk_gap_ms_p95 == pytest.approx(100.0)
    # a run saved without the samples has no pooled tail to give
    del b["chunk_gaps_ms"]
    assert summary.aggregate(points([a, b])).chunk_gap_ms_p95 is None


def test_ttft_median_pools_every_request():
    a, b = row(1, "plain", 100, 30.0), row(2, "plain", 100, 30.0)
    a["requests"] = [{"ttft_ms": 10.0}]
    b["requests"] = [{"ttft_ms": 20.0}, {"ttft_ms": 30.0}, {"ttft_ms": None, "error": "boom"}]
    # pooled: median of 10, 20, 30 is 20 (a median of per-point medians would say 17.5)
    assert summary.aggregate(points([a, b])).ttft_ms_p50 == pytest.approx(20.0)


def test_a_lower_bound_energy_is_never_a_value_or_a_ratio():
    rows = flagged(note25_rows(), 4, "draft", "meter-gap")
    result = summary.summarize(points(rows))
    t = by_batch(result)[4]
    assert t["draft"]["energy_j"] is None and t["draft"]["mj_per_token"] is None
    assert t["draft"]["energy_j_at_least"] == pytest.approx(37.1 * 10.0)  # 1634 tokens at 163.4 tok/s, 37.1 W
    assert t["draft"]["power_w"] is None and t["energy_ratio"] is None and not t["trusted"]
    header, cells = tables.table_cells(summary_from_json(result), tables.MAIN_COLUMNS)
    four = dict(zip(header, cells[2]))
    assert four["draft mJ/token"] == "≥ 227" and four["draft W"] == "≥ 37.1" and four["energy"] == "—"
    csv_line = tables.to_table_csv(summary_from_json(result)).splitlines()[3].split(",")
    assert csv_line[0] == "4" and csv_line[5] == "" and csv_line[6] == ""  # no value, no ratio


@pytest.mark.parametrize("code", sorted(EXCLUDING))
def test_every_excluding_flag_keeps_its_batch_out_of_the_verdict(code):
    # without B=4 (1.12) the curve goes 0.71 at 2 to 1.50 at 8: the crossover moves out to (2, 8)
    result = summary.summarize(points(flagged(note25_rows(), 4, "draft", code)))
    four = by_batch(result)[4]
    assert not four["trusted"] and four["verdict"] is None and four["untrusted_because"] == [code]
    assert (result["crossover"]["below"], result["crossover"]["above"]) == (2, 8)
    assert result["recommendation"] == "draft at ≤ 2 concurrent requests, turn it off from 8"
    assert {"batch": 4, "because": [code]} in result["untrusted"]
    # the point stays in the table, marked (without a meter its speed still counts: a speed verdict)
    assert four["draft"]["points"] == 1 and four["draft"]["trusted"] == (code in checks.ENERGY_ONLY)


@pytest.mark.parametrize("code", ["short-window", "concurrency-unknown"])
def test_warning_flags_do_not_exclude(code):
    result = summary.summarize(points(flagged(note25_rows(), 4, "draft", code)))
    assert by_batch(result)[4]["trusted"] and result["crossover"]["above"] == 4 and result["untrusted"] == []


def test_the_summary_says_which_batches_had_no_trustworthy_pair():
    rows = flagged(flagged(note25_rows(), 8, "draft", "concurrency"), 8, "plain", "meter-gap", "before")
    rows = flagged(rows, 8, "plain", "meter-gap", "after")
    result = summary.summarize(points(rows))
    assert result["untrusted"] == [{"batch": 8, "because": ["concurrency", "meter-gap"]}]
    md = sentences.to_markdown(summary_from_json(result))
    assert "No trustworthy pair at B=8: concurrency, meter-gap" in md
    header, cells = tables.table_cells(summary_from_json(result))
    eight = dict(zip(header, cells[3]))
    assert eight["plain mJ/token"] == "≥ 109" and eight["energy"] == "—" and eight["verdict"] == "not used"
    assert "concurrency" in eight["flags"] and "meter-gap" in eight["flags"]


def test_an_untrusted_ratio_is_shown_in_parentheses_and_not_used():
    result = summary.summarize(points(flagged(note25_rows(), 4, "draft", "output-mismatch")))
    header, cells = tables.table_cells(summary_from_json(result), tables.MAIN_COLUMNS)
    assert dict(zip(header, cells[2]))["energy"] == "(1.12x)"


def test_plain_drift_excludes_its_whole_pass_at_that_batch():
    # pass 0 at B=4 drifted, and its draft point reads half the energy; pass 1 is steady (1.12)
    rows = [r for r in note25_rows() if r["batch"] == 4]
    second = [dict(r, **{"pass": 1, "flags": []}) for r in rows]
    rows[1]["energy_j"] /= 2
    rows = flagged(rows, 4, "plain", "plain-drift", "after") + second
    t = summary.summarize(points(rows))["rows"][0]
    assert t["trusted"] and t["energy_ratio"] == pytest.approx(227 / 203, abs=0.01)
    assert t["excluded_points"] == 3 and t["excluded"] == ["plain-drift"]
    assert t["plain"]["points"] == 2 and t["draft"]["points"] == 1


def test_void_batches_are_kept_but_not_recommended_from():
    rows = note25_rows()
    for r in rows:
        if r["arm"] == "draft" and r["batch"] == 4:
            r["drafted"] = 0
            r["flags"] = [{"code": "void", "message": "void"}]
    result = summary.summarize(points(rows))
    void_row = by_batch(result)[4]
    assert void_row["void"] and not void_row["trusted"] and "void" in void_row["draft"]["flags"]
    assert result["crossover"]["above"] == 8
    assert "void" in result["flags"]


def test_no_trustworthy_pair_anywhere_says_why():
    rows = [r for r in note25_rows() if r["batch"] in (1, 2)]
    for r in rows:
        if r["arm"] == "draft":
            r["flags"] = [{"code": "estimate", "message": "estimate"}]
    result = summary.summarize(points(rows))
    assert result["crossover"] is None
    assert result["recommendation"] == (
        "no valid paired points: nothing to recommend (every batch lacks a trustworthy pair: estimate)"
    )


def test_an_idle_window_that_is_no_baseline_leaves_net_figures_out():
    flag = {"code": "idle-short", "message": "the 0.30 s idle window is shorter than 10 meter update periods"}
    result = summary.summarize(points(note25_rows()), run_meta({"idle_w": None, "idle_flag": flag}))
    assert result["idle_w"] is None and result["idle_flag"] == flag
    assert all(t["plain"]["net_mj_per_token"] is None for t in result["rows"])
    assert f"Idle power not used: {flag['message']}." in sentences.to_markdown(summary_from_json(result))


def test_a_run_saved_by_an_older_spectop_still_summarizes(tmp_path):
    # rows as spectop.point/1 wrote them before this version: no energy_window_s, no gap samples,
    # a meter-gap point whose energy_j and mJ/token hold the lower bound as if it were the value
    store = RunStore(tmp_path)
    for r in note25_rows():
        r.update(
            chunk_gap_ms_p95=3.0,
            energy_covered=True,
            mj_per_token=1000 * r["energy_j"] / r["committed_tokens"],
        )
        store.append_point(as_point(r))
    gap = dict(note25_rows()[4], energy_covered=False, flags=[{"code": "meter-gap", "message": "m"}])
    store.append_point(as_point(gap))
    result = to_json(summary.rewrite_summary(tmp_path))
    assert json.loads((tmp_path / "summary.json").read_text())["schema"] == "spectop.summary/2"
    two = by_batch(result)[2]
    # the meter-gap draft point is left out; the other draft point at B=2 carries the ratio alone
    assert (
        two["trusted"]
        and two["draft"]["points"] == 1
        and two["energy_ratio"] == pytest.approx(0.71, abs=0.01)
    )
    assert two["draft"]["chunk_gap_ms_p95"] is None
    assert (
        "Recommendation: draft at ≤ 2 concurrent requests, turn it off from 4."
        in (tmp_path / "summary.md").read_text()
    )


def test_verdict_column_and_csv_follow_the_rule():
    result = summary.summarize(points(note25_rows()))
    csv_rows = [line.split(",") for line in tables.to_table_csv(summary_from_json(result)).splitlines()]
    assert csv_rows[0][-2:] == ["trusted", "verdict"]
    assert [r[-1] for r in csv_rows[1:]] == ["even", "saves", "costs", "costs", "costs"]
    assert math.isclose(float(csv_rows[2][6]), 279 / 391, abs_tol=0.005)


def codes(flags):
    return {f.code for f in flags}


def test_point_checks():
    assert codes(point_flags(point(), 64, "counter")) == set()
    assert "void" in codes(point_flags(point(drafted=0), 64, "counter"))
    assert "concurrency" in codes(point_flags(point(concurrency_max=2), 64, "counter"))
    assert "concurrency-unknown" in codes(point_flags(point(concurrency_max=None), 64, "counter"))
    assert "early-stop" in codes(point_flags(point(), 128, "counter"))
    assert "estimate" in codes(point_flags(point(), 64, "estimate"))
    assert "short-window" in codes(point_flags(point(short_window=True), 64, "counter"))
    assert "meter-gap" in codes(point_flags(point(energy_covered=False), 64, "counter"))
    assert "other-traffic" in codes(point_flags(point(server_tokens=300), 64, "counter"))
    failed = point(requests=[{"committed_tokens": 64, "error": "boom"}] + [{"committed_tokens": 64}] * 3)
    assert "request-errors" in codes(point_flags(failed, 64, "counter"))


def test_cross_checks():
    plain = point(arm="plain", mj_per_token=100.0)
    same = point(mj_per_token=104.0)
    assert mismatch_flag(same, plain) is None
    other = point(requests=[{"text_sha256": "b"}] + [{"text_sha256": "a"}] * 3)
    assert "1 of 4 outputs differ" in mismatch_flag(other, plain).message
    assert drift_flag(same, plain, 0.05) is None
    assert "+6.0 %" in drift_flag(point(mj_per_token=106.0), plain, 0.05).message


def test_unknown_drafting_counts_give_unknown_figures_not_g_one():
    # a draft point on a server that reported no drafting counts (vLLM without per-request metrics
    # and no counters) but whose steps were read from the stream: G is unknown, not 1 + 0/150
    rows = note25_rows()
    for r in rows:
        if r["arm"] == "draft" and r["batch"] == 4:
            r.update(drafted=None, accepted=None, steps=150)
    draft4 = by_batch(summary.summarize(points(rows)))[4]["draft"]
    assert (
        draft4["acceptance"] is None and draft4["mean_advance"] is None and draft4["verified_width"] is None
    )
    draft2 = by_batch(summary.summarize(points(rows)))[2]["draft"]
    assert draft2["mean_advance"] == pytest.approx(
        1 + 280 / 200
    )  # the known ones: 280 accepted over 200 steps
