"""A live panel of bars alone, for holding its sparkline against Textual's (tests and bench)."""

from __future__ import annotations

from tui.widgets.panel import Panel


class Bars(Panel):
    """A panel whose view is its series: no text above the bars."""

    SPARKLINE = True

    def lines(self, view: list[float]) -> list[str]:
        return []

    def series(self, view: list[float]) -> list[float]:
        return view
