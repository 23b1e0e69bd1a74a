"""A panel's sparkline draws cell for cell what Textual's own Sparkline draws (its truth is
Textual's renderable, rendered beside it in the same app), no point and one point included."""

from __future__ import annotations

import math

from textual.app import App, ComposeResult
from textual.widgets import Sparkline

from tests.support.panels import Bars
from tui.widgets.panel import Panel


class Pair(App[None]):
    # the panel's content and the Sparkline are both 37 x 3: fewer cells than points, buckets of 2-3
    CSS = """
    Sparkline { height: 3; width: 37; }
    Bars { height: 5; width: 41; }
    """

    def compose(self) -> ComposeResult:
        yield Sparkline([], summary_function=max)
        yield Bars()


def cells(widget: Sparkline | Panel) -> list[list[tuple[str, object]]]:
    """Each drawn line as (character, style) per cell, its meta (mouse offsets) left out."""
    return [
        [
            (ch, seg.style and seg.style.clear_meta_and_links())
            for seg in widget.render_line(y)
            for ch in seg.text
        ]
        for y in range(widget.size.height)
    ]


async def test_a_panels_sparkline_draws_textuals_cells():
    app = Pair()
    async with app.run_test(size=(60, 12)) as pilot:
        textual, bars = app.query_one(Sparkline), app.query_one(Bars)
        for data in (
            [],  # no point: a floor of ▁
            [4.0],  # one point: full blocks
            [0.0, 1.0],  # two points: the lowest and the highest bar
            [50 + 40 * math.sin(i / 7) for i in range(90)],  # a wave over all three lines, many colours
            [5.0] * 20 + [7.5] * 20,  # a step: extent from two values
            [3.0] * 10,  # flat: every bar at the bottom
        ):
            textual.data, bars.view = data, list(data)
            await pilot.pause()
            drawn = cells(bars)
            assert drawn == cells(textual), data
        # a wave's top line holds full blocks and blanks; its colours vary along the line
        bars.view = [50 + 40 * math.sin(i / 7) for i in range(90)]
        await pilot.pause()
        top = cells(bars)[0]
        assert len(top) == 37 and " " in {ch for ch, _ in top}
        assert len({style for ch, style in top if ch != " "}) > 5
