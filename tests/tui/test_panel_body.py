"""The panels' body draws the cells a Static draws, and a new view repaints only its changed rows."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Static

from tui.widgets.panel_body import PanelBody

LINES = [
    Text.assemble(("788.7", "bold"), " tok/s over 5 s"),
    Text("2/4 slots", style="dim"),
    Text(""),
    Text("advice that is longer than the body is wide, so that it wraps onto the next rows", style="yellow"),
]


class Side(App[None]):
    CSS = "Static, PanelBody { width: 30; }"

    def compose(self) -> ComposeResult:
        yield Static(Group(*LINES), id="static")  # as the panels drew their bodies before
        yield PanelBody(LINES, classes="body")


def cells(widget: Static | PanelBody) -> list[list[tuple[str, object]]]:
    """Each cell's character and style; a Static's offsets for mouse selection left out."""
    return [
        [
            (ch, seg.style and seg.style.clear_meta_and_links())
            for seg in widget.render_line(y)
            for ch in seg.text
        ]
        for y in range(widget.size.height)
    ]


async def test_the_body_draws_a_statics_cells_wrapping_included():
    app = Side()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        static, body = app.query_one("#static", Static), app.query_one(PanelBody)
        assert body.size.height == static.size.height == 6  # the advice wraps onto three rows
        assert cells(body) == cells(static)


async def test_a_new_view_repaints_only_the_rows_that_changed():
    app = Side()
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        body = app.query_one(PanelBody)
        asked: list[tuple[tuple[Region, ...], bool]] = []
        refresh = body.refresh
        body.refresh = lambda *regions, **kw: (
            asked.append((regions, kw.get("layout", False))),
            refresh(*regions, **kw),
        )[1]  # type: ignore[method-assign]
        changed = [Text.assemble(("791.2", "bold"), " tok/s over 5 s"), *LINES[1:]]
        body.show(changed)
        await pilot.pause()
        assert asked == [((Region(0, 0, 30, 1),), False)]
        assert body.render_line(0).text.startswith("791.2 tok/s")
        body.show(changed)  # the same rows: nothing to repaint
        body.show([*changed, Text("one row more")])  # a row more: the height changes
        await pilot.pause()
        assert asked[1] == ((), True)  # then Textual's own, for the new size
        assert body.size.height == 7
