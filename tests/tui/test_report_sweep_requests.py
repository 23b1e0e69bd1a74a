"""`spectop report DIR` on a saved sweep: per arm and batch, the energy per request, tokens per
joule, mean energy-delay product and the acceptance over its requests (issue 27 item 4).

Truths by hand, one batch of 2. Plain runs twice (before and after draft), each point 40 J over
two requests of 100 and 60 tokens that took 2 s each (50 and 30 tok/s): split by tokens they took
25 J and 15 J, EDP 25 × 2 = 50 and 15 × 2 = 30 J·s. Plain: 4 requests, 80 J, 20.00 J/request,
320 / 80 = 4.00 tokens/J, EDP (50 + 30 + 50 + 30) / 4 = 40.000 J·s. Draft: one point of 20 J over
two requests of 80 tokens that took 1 s each: 10 J each, 10.00 J/request, 160 / 20 = 8.00 tokens/J,
EDP 10.000 J·s; they accepted 45 of 60 (75 %) and 38 of 40 (95 %) drafted tokens: the 70-80 % and
90-100 % bins.
"""

from __future__ import annotations

import json

import pytest

from collectors.sweep.per_request import per_request_rows
from tests.support.sweep_rows import as_point, row
from tui.cli import main


def request(tokens: int, seconds: float, drafted: int | None = None, accepted: int | None = None) -> dict:
    return {
        "committed_tokens": tokens,
        "tok_s": tokens / seconds,
        "draft_n": drafted,
        "draft_n_accepted": accepted,
        "text_sha256": "a",
    }


def points() -> list[dict]:
    plain = [request(100, 2.0), request(60, 2.0)]
    draft = [request(80, 1.0, 60, 45), request(80, 1.0, 40, 38)]
    return [
        {**row(2, "plain", 80.0, 20.0, seconds=2.0, phase="before"), "requests": plain},
        {**row(2, "draft", 80.0, 10.0, seconds=2.0, drafted=100, accepted=83, steps=77), "requests": draft},
        {**row(2, "plain", 80.0, 20.0, seconds=2.0, phase="after"), "requests": plain},
    ]


def test_each_arms_requests_share_their_points_joules_by_tokens():
    plain, draft = per_request_rows([as_point(p) for p in points()])
    assert (plain.arm, plain.requests, draft.arm, draft.requests) == ("plain", 4, "draft", 2)
    assert plain.energy_j_per_request == pytest.approx(20.0) and plain.tokens_per_j == pytest.approx(4.0)
    assert plain.edp_js_mean == pytest.approx(40.0)
    assert draft.energy_j_per_request == pytest.approx(10.0) and draft.tokens_per_j == pytest.approx(8.0)
    assert draft.edp_js_mean == pytest.approx(10.0)
    assert draft.acceptance.counts == (0, 0, 0, 0, 0, 0, 0, 1, 0, 1)
    assert plain.acceptance.requests == 0 and plain.acceptance.no_counts == 4


def test_a_point_the_meter_did_not_cover_leaves_its_group_without_energy():
    rows = points()
    rows[1] = {**rows[1], "energy_covered": False}  # its 20 J are a lower bound
    _, draft = per_request_rows([as_point(p) for p in rows])
    assert draft.energy_j_per_request is None and draft.tokens_per_j is None and draft.edp_js_mean is None
    assert draft.requests == 2 and draft.acceptance.requests == 2  # the counts are still the server's


def test_report_prints_the_per_request_table_and_the_drafting_arms_histogram(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "points.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points()))
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if "per request" in line)
    cells = {
        c[1]: c[2:]
        for c in ([x.strip() for x in line.split("│")[1:-1]] for line in out[start:])
        if len(c) > 2
    }
    assert cells["plain"] == ["4", "20.00", "4.00", "40.000", "—"]
    assert cells["draft"] == ["2", "10.00", "8.00", "10.000", "·······█·█"]
    bars = {line.split(" %")[0].strip(): line.split()[-1] for line in out[start:] if " % " in line}
    assert bars["70-80"] == "1" and bars["90-100"] == "1" and bars["60-70"] == "0"
    assert any("acceptance over requests, draft (every batch, 2 requests)" in line for line in out)
