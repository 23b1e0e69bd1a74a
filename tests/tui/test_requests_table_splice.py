"""A slot row rewritten in place (RequestsTable._rewrite_cells splices the new text into the row's
cached render) reads on screen exactly as DataTable draws the same values from scratch: characters,
colours, cursor and zebra stripes, and the row and column each cell answers clicks for."""

from __future__ import annotations

from textual.app import App, ComposeResult

from collectors.servers.snapshot import ServerSnapshot
from tui.widgets.requests_table import RequestsTable

SNAPSHOT = ServerSnapshot(
    url="http://x", backend="llama.cpp", taken_at_s=0.0, status="ok", slots_total=4, slots_busy=2
)


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RequestsTable(id="requests-table")


def drawn(table: RequestsTable) -> list[list[tuple[str, str, tuple]]]:
    """Each line as runs of one look: text, colours and attributes, click metadata."""
    lines = []
    for y in range(table.size.height):
        runs: list[tuple[str, str, tuple]] = []
        for segment in table.render_line(y):
            look = (str(segment.style), tuple(sorted(segment.style.meta.items())) if segment.style else ())
            if runs and runs[-1][1:] == look:
                runs[-1] = (runs[-1][0] + segment.text, *look)
            else:
                runs.append((segment.text, *look))
        lines.append(runs)
    return lines


async def table_after(
    polls: list[tuple[list[tuple[int, int]], dict[int, float]]], focused: bool, splice: bool = True
):
    """What the table draws after these polls of slots (busy slot, tokens) and rates, one frame
    each; and how many cells DataTable rendered for the last poll's frame."""
    app = TableApp()
    async with app.run_test(size=(140, 12)) as pilot:
        table = app.query_one(RequestsTable)
        if not focused:
            table.can_focus = False
            app.set_focus(None)
        if not splice:  # every rewritten row drawn again from its cells, as before the splice
            table._splice = lambda drawn, cells: None  # type: ignore[method-assign]
        rendered_cells: list[int] = []
        render_cell = table._render_cell

        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            rendered_cells.append(1)
            return render_cell(*args, **kwargs)

        table._render_cell = counted  # type: ignore[method-assign]
        for busy, rates in polls:
            rendered_cells.clear()
            table.show_slots(SNAPSHOT, busy, rates)
            await pilot.pause()
        last_poll_cells = len(rendered_cells)  # drawn below renders every line: counted before
        return drawn(table), last_poll_cells


STEADY = [([(2, 10 + i), (3, 200 + 2 * i)], {2: 20.5 + i, 3: 31.0 + i}) for i in range(4)]


async def test_a_steady_poll_redraws_no_cell_and_reads_as_a_fresh_table() -> None:
    for focused in (True, False):  # the cursor row drawn highlighted, or not
        spliced, cells_rendered = await table_after(STEADY, focused)
        fresh, _ = await table_after(STEADY[-1:], focused)
        assert cells_rendered == 0  # the last poll joined the rows from their cached cells
        assert spliced == fresh
        assert any("206" in text for runs in spliced for text, *_ in runs)  # slot 3's last tokens


async def test_cells_that_cannot_be_spliced_are_drawn_again_as_without_the_splice() -> None:
    polls = [
        *STEADY,
        ([(3, 9_999_999)], {3: 1234.5}),  # wider than tokens and tok/s: the columns widen; slot 2 idle
        ([(2, 5), (3, 10_000_000)], {2: 3.0}),  # slot 2 back from idle (a styled Text before)
        ([(2, 6), (3, 10_000_001)], {2: 4.0, 3: 5.0}),
    ]
    spliced, cells_rendered = await table_after(polls, focused=True)
    redrawn, _ = await table_after(polls, focused=True, splice=False)
    fresh, _ = await table_after(polls[-1:], focused=True)
    assert spliced == redrawn
    shown = [" ".join(text.split()) for runs in spliced for text, *_ in runs]
    assert "10000001" in shown and "1234.5" not in shown and "5.0" in shown  # nothing cut short
    assert fresh[0] == spliced[0]  # the header: columns as wide as a fresh table's
