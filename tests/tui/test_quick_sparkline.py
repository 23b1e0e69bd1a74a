"""The panels' sparkline draws cell for cell what Textual's own Sparkline draws (its truth is
Textual's renderable, rendered beside it in the same app), and draws again only on new data."""

from __future__ import annotations

import math

from textual.app import App, ComposeResult
from textual.widgets import Sparkline

from tui.widgets.sparkline import QuickSparkline


class Pair(App[None]):
    CSS = "Sparkline { height: 3; width: 37; }"  # 3 lines; fewer cells than points: buckets of 2-3

    def compose(self) -> ComposeResult:
        yield Sparkline([], summary_function=max, id="textual")
        yield QuickSparkline([], summary_function=max, id="quick")


def cells(widget: Sparkline) -> list[list[tuple[str, object]]]:
    """Each drawn line as (character, style) per cell."""
    return [
        [(ch, seg.style) for seg in widget.render_line(y) for ch in seg.text]
        for y in range(widget.size.height)
    ]


async def test_the_quick_sparkline_draws_textuals_cells():
    app = Pair()
    async with app.run_test(size=(60, 10)) as pilot:
        textual, quick = app.query_one("#textual", Sparkline), app.query_one("#quick", QuickSparkline)
        for data in (
            [0.0, 1.0],  # two points: the lowest and the highest bar
            [50 + 40 * math.sin(i / 7) for i in range(90)],  # a wave over all three lines, many colours
            [5.0] * 20 + [7.5] * 20,  # a step: extent from two values
            [3.0] * 10,  # flat: every bar at the bottom
        ):
            textual.data, quick.data = data, list(data)
            await pilot.pause()
            drawn = cells(quick)
            assert drawn == cells(textual), data
            assert all(len(line) == 37 for line in drawn)
        # a wave's top line holds full blocks and blanks; its colours vary along the line
        textual.data = quick.data = [50 + 40 * math.sin(i / 7) for i in range(90)]
        await pilot.pause()
        top = cells(quick)[0]
        assert {ch for ch, _ in top} & {" "} and len({style for ch, style in top if ch != " "}) > 5
        assert quick.render_line(0) is quick.render_line(0)  # the same data: the strip kept, not drawn again
