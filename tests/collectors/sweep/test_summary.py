"""The sweep summary reproduces note 25's table from its own rows, and finds the crossover."""

from __future__ import annotations

import pytest

from collectors.sweep import summary
from collectors.sweep.checks import drift_flag, mismatch_flag, point_flags

# note 25: requests, plain tok/s, draft tok/s, plain W, draft W
NOTE25 = [
    (1, 61.9, 78.3, 22.9, 29.8),
    (2, 100.2, 125.5, 39.1, 35.0),
    (4, 192.3, 163.4, 39.0, 37.1),
    (8, 339.2, 229.8, 36.9, 37.6),
    (16, 377.0, 329.1, 35.9, 37.5),
]
EXPECTED = {
    1: (370, 381, 1.03),
    2: (391, 279, 0.71),
    4: (203, 227, 1.12),
    8: (109, 163, 1.50),
    16: (95, 114, 1.20),
}


def row(batch, arm, tok_s, power_w, seconds=10.0, phase="", drafted=0, accepted=0, steps=0, flags=()):
    tokens = round(tok_s * seconds)
    return {
        "batch": batch,
        "arm": arm,
        "phase": phase,
        "pass": 0,
        "window_s": tokens / tok_s,
        "committed_tokens": tokens,
        "energy_j": power_w * tokens / tok_s,
        "net_energy_j": None,
        "drafted": drafted,
        "accepted": accepted,
        "steps": steps,
        "flags": [{"code": c, "message": c} for c in flags],
    }


def note25_rows():
    rows = []
    for b, p_tok, d_tok, p_w, d_w in NOTE25:
        rows += [
            row(b, "plain", p_tok, p_w, phase="before"),
            row(b, "draft", d_tok, d_w, drafted=400, accepted=280, steps=200),
            row(b, "plain", p_tok, p_w, phase="after"),
        ]
    return rows


def test_note25_table_is_reproduced():
    result = summary.summarize(note25_rows())
    for t in result["rows"]:
        plain_mj, draft_mj, ratio = EXPECTED[t["batch"]]
        assert t["plain"]["mj_per_token"] == pytest.approx(plain_mj, abs=1.5)
        assert t["draft"]["mj_per_token"] == pytest.approx(draft_mj, abs=1.5)
        assert t["energy_ratio"] == pytest.approx(ratio, abs=0.006)
        assert t["draft"]["acceptance"] == pytest.approx(0.70)
        assert t["draft"]["mean_advance"] == pytest.approx(2.4)
        # Eq. 6 holds on every row
        assert t["energy_ratio"] == pytest.approx(t["power_ratio"] / t["speedup"])
    cross = result["crossover"]
    assert (cross["below"], cross["above"]) == (2, 4) and 2 < cross["batch"] < 4
    assert result["recommendation"] == "draft at ≤ 2 concurrent requests, turn it off from 4"
    md = summary.to_markdown(result)
    assert "| 2 | 100.2 | 125.5 | 1.25x | 390 | 279 | 0.71x | 39.1 | 35.0 | 70 % |" in md


def test_break_even_counts_as_worth_drafting():
    # note 25 costs 3 % at one request (and is 1.26x faster), saves at two, costs from four
    ratios = [(1, 1.03), (2, 0.71), (4, 1.12)]
    assert summary.crossover(ratios)["below"] == 2
    assert summary.recommend(ratios) == "draft at ≤ 2 concurrent requests, turn it off from 4"
    assert "no clean crossover" in summary.recommend([(1, 0.8), (2, 1.2), (4, 0.8)])


def test_ratios_are_ratios_of_totals_over_passes():
    # two passes: 100 tokens at 1 J and 300 tokens at 9 J; a mean of per-pass ratios would say 20 mJ
    rows = [row(1, "plain", 100, 1.0, seconds=1.0), row(1, "plain", 300, 9.0, seconds=1.0)]
    agg = summary.aggregate(rows)
    assert agg["mj_per_token"] == pytest.approx(1000 * 10.0 / 400)


@pytest.mark.parametrize(
    ("ratios", "says"),
    [
        ([(1, 0.8), (2, 0.9)], "saves energy at every measured batch (1–2 concurrent requests): keep it on"),
        ([(1, 0.8), (2, 1.02)], "saves energy or breaks even at every measured batch"),
        ([(1, 1.1), (2, 1.3)], "costs energy at every measured batch (1–2 concurrent requests): turn it off"),
        ([(1, 1.1), (8, 0.9)], "drafting costs energy up to 1 concurrent request and pays from 8"),
        ([], "no valid paired points: nothing to recommend"),
    ],
)
def test_recommendations(ratios, says):
    assert says in summary.recommend(ratios)


def test_void_batches_are_kept_but_not_recommended_from():
    rows = note25_rows()
    for r in rows:
        if r["arm"] == "draft" and r["batch"] == 4:
            r["drafted"] = 0
            r["flags"] = [{"code": "void", "message": "void"}]
    result = summary.summarize(rows)
    void_row = next(t for t in result["rows"] if t["batch"] == 4)
    assert void_row["void"] and "void" in void_row["draft"]["flags"]
    assert result["crossover"]["above"] == 8
    assert "void" in result["flags"]


def point(**over):
    base = {
        "batch": 4,
        "arm": "draft",
        "drafted": 10,
        "concurrency_max": 4,
        "energy_covered": True,
        "short_window": False,
        "window_s": 10.0,
        "meter_update_period_s": 0.1,
        "committed_tokens": 256,
        "server_tokens": 256,
        "requests": [{"committed_tokens": 64, "text_sha256": "a"}] * 4,
    }
    base.update(over)
    return base


def codes(flags):
    return {f["code"] for f in flags}


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
    assert "1 of 4 outputs differ" in mismatch_flag(other, plain)["message"]
    assert drift_flag(same, plain, 0.05) is None
    assert "+6.0 %" in drift_flag(point(mj_per_token=106.0), plain, 0.05)["message"]
