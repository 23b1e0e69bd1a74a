"""spectop sweep's line per point: energy the meter did not cover reads as a lower bound."""

from __future__ import annotations

from tests.support.sweep_rows import as_point
from tui.commands.sweep import _point_line


def point(**over):
    row = {"batch": 2, "arm": "draft", "phase": "", "tok_s": 100.0, "committed_tokens": 200, "flags": []}
    return as_point({**row, **over})


def test_a_covered_point_prints_its_figures():
    line = _point_line(point(energy_j=100.0, energy_covered=True, power_w=50.0, mj_per_token=500.0))
    assert "50.0 W, 500 mJ/token" in line


def test_an_uncovered_point_prints_at_least():
    gap = {"code": "meter-gap", "message": "the meter's samples do not cover the whole window"}
    line = _point_line(
        point(energy_j=100.0, energy_covered=False, power_w=None, mj_per_token=None, flags=[gap])
    )
    assert "—, ≥ 500 mJ/token" in line and "do not cover" in line
