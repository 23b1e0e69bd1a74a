"""A panel draws the cells a Static and a Sparkline draw, in one widget, and a new view repaints only
the rows whose cells changed."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Sparkline, Static

from tui.widgets.panel import Panel

LINES = [
    Text.assemble(("788.7", "bold"), " tok/s over 5 s"),
    Text("2/4 slots", style="dim"),
    Text("advice longer than the panel is wide, so it wraps", style="yellow"),
]
SERIES = [3.0, 9.5, 4.0, 12.0, 0.5, 7.25, 8.0]


class Figures(Panel):
    SPARKLINE = True

    def lines(self, view: tuple[list[Text], list[float]]) -> list[Text]:
        return view[0]

    def series(self, view: tuple[list[Text], list[float]]) -> list[float]:
        return view[1]


class Side(App[None]):
    # the panel's content is 30 x 7: three rows of text wrap to four, the sparkline takes three
    CSS = """
    Figures { width: 34; height: 9; }
    Static, Sparkline { width: 30; }
    Sparkline { height: 3; }
    """

    def compose(self) -> ComposeResult:
        yield Figures()
        yield Static(Group(*LINES))
        yield Sparkline(SERIES, summary_function=max)


def cells(strips: list[Strip]) -> list[list[tuple[str, object]]]:
    """Each cell's character and style; a Static's offsets for mouse selection left out."""
    return [
        [(ch, seg.style and seg.style.clear_meta_and_links()) for seg in s for ch in seg.text] for s in strips
    ]


def rows(widget: Panel | Static | Sparkline) -> list[Strip]:
    return [widget.render_line(y) for y in range(widget.size.height)]


async def test_a_panel_draws_the_cells_of_a_static_above_a_sparkline():
    app = Side()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(Figures)
        panel.view = (LINES, SERIES)
        await pilot.pause()
        static, sparkline = app.query_one(Static), app.query_one(Sparkline)
        assert static.size.height == 4  # the advice wraps onto two rows
        assert cells(rows(panel)) == cells(rows(static) + rows(sparkline))


async def test_a_new_view_repaints_only_the_rows_that_changed():
    app = Side()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(Figures)
        panel.view = (LINES, SERIES)
        await pilot.pause()
        asked: list[tuple[Region, ...]] = []
        refresh = panel.refresh
        panel.refresh = lambda *regions, **kw: (asked.append(regions), refresh(*regions, **kw))[1]  # type: ignore[method-assign]
        panel.view = ([Text.assemble(("791.2", "bold"), " tok/s over 5 s"), *LINES[1:]], SERIES)
        await pilot.pause()
        assert asked == [(Region(0, 0, 30, 1),)]  # the figure's row, not "2/4 slots" or the bars
        assert panel.render_line(0).text.startswith("791.2 tok/s")
        panel.view = (panel.view[0], [*SERIES, 20.0])  # a new point: the bars' three rows
        await pilot.pause()
        assert asked[1] == tuple(Region(0, y, 30, 1) for y in (4, 5, 6))
