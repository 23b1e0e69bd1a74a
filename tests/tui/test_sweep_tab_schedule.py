"""The Sweep tab's verdict for a multi-arm run with a scheduled and a K = 0 arm says, in one line,
where the scheduled arm holds against the envelope and what K = 0 costs (the full sentences are in
summary.md and `spectop report`; figures by hand in tests/support/schedule_rows.py)."""

from __future__ import annotations

from tests.support.schedule_rows import FIGURES, summary_of
from tui.widgets.sweep_panel import arms_verdict


def test_the_verdict_names_the_schedule_and_k0s_cost() -> None:
    text = arms_verdict(summary_of()).plain
    assert (
        "Scheduled: within the band at B=1, 2, 4, 8, 16; K = 0 costs +6.5 % to +13.5 % time per token "
        "against plain." in text.splitlines()
    )
    costly = {**FIGURES, 16: {**FIGURES[16], "scheduled": (150.8, 36.0), "k0": (150.8, 36.0)}}
    line = next(
        ln for ln in arms_verdict(summary_of(costly)).plain.splitlines() if ln.startswith("Scheduled")
    )
    assert line.startswith("Scheduled: ABOVE the envelope's band at B=16;")
