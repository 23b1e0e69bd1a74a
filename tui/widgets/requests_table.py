"""One row per request spectop can see: its own probes and sweep requests, the requests the server's
log reported (`--server-log`), and the server's slots. The `who` column says where a row came from:
`probe`/`sweep` (spectop's own), `log s<slot>` (the server's log), `proxy` (a client's request through
`--proxy`, which has gap tails; `proxy→draft`/`proxy→plain` when routed by batch, yellow where the
other server was down) or `server` (a live slot).
Enter on a request's row opens its detail (tui/widgets/request_detail.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from collectors.energy.attribution import Attribution
from collectors.fmt import MISSING, num, pct
from collectors.requests.record import RequestRecord
from collectors.requests.router import parse_tag
from collectors.servers.snapshot import ServerSnapshot

COLUMNS = (
    ("id", "id"),
    ("who", "who"),
    ("tokens", "tokens"),
    ("accept", "accept"),
    ("width", "width"),
    ("batch", "batch"),
    ("G", "G"),
    ("tok/s", "tok_s"),
    ("mJ/tok", "mj"),
    ("TTFT ms", "ttft"),
    ("p50", "p50"),
    ("p95", "p95"),
    ("p99", "p99"),
    ("max ms", "max"),
)


def _sortable(cell: object) -> tuple[int, float | str]:
    """Numbers sort as numbers, dashes last."""
    text = str(cell.plain if isinstance(cell, Text) else cell).replace("%", "").rstrip("*").strip()
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


def mj_cell(attribution: Attribution | None) -> str:
    """A request's attributed mJ/token; a `*` when traffic spectop did not see shared the energy."""
    text = num(attribution.mj_per_token if attribution else None, ".0f")
    return text + "*" if attribution and attribution.shared and text != MISSING else text


def _plain(value: object) -> bool:
    """A cell DataTable draws as its characters in the row's style: a string with no markup."""
    return isinstance(value, str) and "[" not in value and ":" not in value and value.isprintable()


def _cells_wide(value: object) -> int:
    """The cells a value takes on screen (a string's markup is not shown)."""
    return value.cell_len if isinstance(value, Text) else Text.from_markup(str(value)).cell_len


def _look(style: Style | None) -> tuple[str, tuple[tuple[str, object], ...]]:
    """A segment's style as drawn: colours and attributes, and the row and column it answers clicks for."""
    return ("", ()) if style is None else (str(style), tuple(sorted(style.meta.items())))


def _signature(cell: object) -> object:
    """What a cell shows: a Rich Text's equality ignores its style, so compare that too."""
    if isinstance(cell, Text):
        return (cell.plain, str(cell.style), tuple(cell.spans))
    return cell


class RequestsTable(DataTable):
    """Rows keyed by request id (or slot), rewritten only where they changed; click a header to sort.

    Until a header is clicked, requests come first, newest (latest to end) first, then the server's
    slots by slot id: rows are placed again when one is added, not only appended. The last cells
    shown are kept per row, so an update rewrites only the cells whose text changed and adds or
    removes only the rows that appeared or went: a full table is 200 rows of 14 cells.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        for label, key in COLUMNS:  # here, not on mount: rows may come before the table has mounted
            self.add_column(label, key=key)
        self._sort: tuple[str, bool] | None = None
        self._shown: dict[str, tuple[object, ...]] = {}  # row key -> signatures of its cells
        self._slot_keys: set[str] = set()
        self._slot_ids: dict[int, None] = {}  # slots seen busy, least recently busy first: each keeps its row
        self._record_keys: set[str] = set()
        self._record_cells: dict[str, tuple[RequestRecord, Attribution | None, list[object]]] = {}
        self._done_s: dict[str, float] = {}  # request id -> when it ended, for the default order
        self._place_rows = False  # rows were added: sort them into the default order when idle

    def record_cells(self, r: RequestRecord, attribution: Attribution | None) -> list[object]:
        lat = r.latency
        source, _, detail = r.tag.partition(":")
        if source == "log":  # the server's log: which slot served it
            who = Text(f"log s{detail.removeprefix('slot ')}", style="green")
        elif source == "proxy":  # a client's request through --proxy; routed: the server that served it
            routed = parse_tag(r.tag)
            style = "red" if r.error else "yellow" if routed and routed.note else "blue"
            who = Text(f"proxy→{routed.name}" if routed else "proxy", style=style)
        else:
            who = Text(source or "client", style="red" if r.error else "")
        return [
            r.request_id,
            who,
            num(r.committed_tokens, "d"),
            pct(r.acceptance, 1),
            num(r.verified_width, ".2f"),
            num(r.concurrency_mean, ".1f"),
            num(r.mean_advance, ".2f"),
            num(r.tok_s, ".1f"),
            mj_cell(attribution),
            num(lat.ttft_ms, ".0f"),
            num(lat.chunk_gaps.p50_ms, ".1f"),
            num(lat.chunk_gaps.p95_ms, ".1f"),
            num(lat.chunk_gaps.p99_ms, ".1f"),
            num(lat.chunk_gaps.max_ms, ".1f"),
        ]

    def show_slots(
        self,
        snapshot: ServerSnapshot | None,
        slot_states: Iterable[tuple[int, int]] = (),
        slot_tok_s: dict[int, float] | None = None,
    ) -> None:
        """The server's slots, live: a busy one's tokens decoded so far and tokens/s, the others idle.

        A slot keeps its row once seen, idle or busy (up to the server's slot count, the least recently
        busy going first past it): adding or removing a row makes DataTable render
        every visible cell again, while a rewritten cell re-renders only its row, so a request that
        ends on one slot as another starts on the next costs a few cells, not the whole table.
        """
        busy_now = dict(slot_states)
        for slot_id in busy_now:  # moved to the end: the most recently busy
            self._slot_ids.pop(slot_id, None)
            self._slot_ids[slot_id] = None
        # as many rows as the server has slots: a server whose slot ids change every poll (a
        # restart loop, a broken build) would otherwise add a row for good each time
        limit = max(snapshot.slots_total or 0 if snapshot else 0, len(busy_now), 1)
        while len(self._slot_ids) > limit:
            del self._slot_ids[next(iter(self._slot_ids))]
        busy = num(snapshot.slots_busy, "d") if snapshot else "—"
        wanted: dict[str, list[object]] = {}
        for slot_id in sorted(self._slot_ids):
            cells: list[object] = [f"slot {slot_id}", Text("server", style="cyan")]
            if slot_id in busy_now:
                rate = num((slot_tok_s or {}).get(slot_id), ".1f")
                cells += [str(busy_now[slot_id]), "—", "—", busy, "—", rate] + ["—"] * 6
            else:
                cells += [Text("idle", style="dim")] + ["—"] * 11
            wanted[f"slot-{slot_id}"] = cells
        self._slot_keys = self._sync(self._slot_keys, wanted)

    def show_records(self, records: Iterable[RequestRecord], attribution: Mapping[str, Attribution]) -> None:
        """spectop's own requests and logged ones, newest first; a record's cells are formatted once."""
        wanted: dict[str, list[object]] = {}
        cache: dict[str, tuple[RequestRecord, Attribution | None, list[object]]] = {}
        for r in reversed(list(records)):
            share = attribution.get(r.request_id)
            known = self._record_cells.get(r.request_id)
            if known is None or known[0] is not r or known[1] != share:
                known = (r, share, self.record_cells(r, share))
            cache[r.request_id] = known
            wanted[r.request_id] = known[2]
        self._record_cells = cache
        self._done_s = {key: known[0].t_done_s for key, known in cache.items()}
        self._record_keys = self._sync(self._record_keys, wanted)

    def _sync(self, owned: set[str], wanted: dict[str, list[object]]) -> set[str]:
        """Make the rows in `owned` those in `wanted`, touching only what differs; returns the new keys."""
        changed = added = False
        for key in owned - wanted.keys():
            self.remove_row(key)
            del self._shown[key]
        for key, cells in wanted.items():
            signatures = tuple(_signature(c) for c in cells)
            shown = self._shown.get(key)
            if shown is None:
                self.add_row(*cells, key=key)
                changed = added = True
            elif shown != signatures:
                moved = [
                    (column, value)
                    for (_, column), value, was, now in zip(COLUMNS, cells, shown, signatures)
                    if was != now
                ]
                self._rewrite_cells(key, moved)
                changed = True
            self._shown[key] = signatures
        if changed and self._sort:
            self.sort(self._sort[0], key=_sortable, reverse=self._sort[1])
        elif added and not self._sort:  # a new row is appended: put in its place once measured
            self._place_rows = True
            self.check_idle()
        return set(wanted)

    async def _on_idle(self, event: events.Idle) -> None:
        """DataTable measures new rows when idle; a sort before that renders the rows with the old
        column widths and caches them so (ids cut to two letters), so the rows are placed after."""
        await super()._on_idle(event)  # Textual calls DataTable's own handler again: then a no-op
        if self._place_rows:
            self._place_rows = False
            self.sort("id", "who", key=self._default_order)

    def _default_order(self, cells: tuple[object, object]) -> tuple[int, float]:
        """Requests newest first, then the slots by id (numerically: slot 10 after slot 9)."""
        row_id, who = (str(c.plain if isinstance(c, Text) else c) for c in cells)
        if who == "server":  # a slot's row (a request's `who` is its source: probe, log s0, ...)
            return (1, float(row_id.removeprefix("slot ")))
        return (0, -self._done_s.get(row_id, 0.0))

    def _rewrite_cells(self, row_key: str, cells: list[tuple[str, object]]) -> None:
        """DataTable.update_cell for a row's changed cells (column, value), drawing again only them.

        update_cell bumps the table's update count, which is part of every render cache key: every
        visible cell is then rendered again (about 280 at 140x42), which made a poll cost ten times
        a meter read. Here the cells leave the cell cache, and the row's cached render (its cells'
        segments, kept per style and cursor state) gets the new text in place of the old where a
        cell is plain text in one style: a busy slot's tokens and tok/s, every poll. Its line is
        then joined again from the cache, its other cells not rendered again (`_splice`). This reads
        DataTable's private caches, which is why the Textual stack is pinned exactly; the Pilot
        tests read the screen, and test_requests_table_splice checks a spliced row against
        DataTable's own drawing.
        """
        row = self.rows[RowKey(row_key)].key  # the key object the caches hold: compared by identity
        index = self.get_row_index(row)
        columns = {ColumnKey(column): value for column, value in cells}
        if any(_cells_wide(v) > self.columns[c].content_width for c, v in columns.items()):
            for column_key, value in columns.items():  # the column widens (every cell drawn again): rare
                self.update_cell(row, column_key, value, update_width=True)
            return
        olds = {column: self._data[row].get(column) for column in columns}
        self._data[row].update(columns)
        for cell_key in [k for k in self._cell_render_cache.keys() if k[0] is row and k[1] in columns]:
            self._cell_render_cache.discard(cell_key)
        for renderables_key in [k for k in self._row_renderable_cache.keys() if k[1] == index]:
            self._row_renderable_cache.discard(renderables_key)
        for render_key in [k for k in self._row_render_cache.keys() if k[0] is row]:
            drawn = self._row_render_cache.get(render_key)
            spliced = drawn and self._splice(drawn, {c: (olds[c], v) for c, v in columns.items()})
            self._row_render_cache.discard(render_key)  # the cache's set keeps an existing key's value
            if spliced:
                self._row_render_cache[render_key] = spliced
        self._line_cache.clear()  # lines are joined again from the row caches
        self.refresh_row(index)

    def _splice(
        self, drawn: tuple[list, list], cells: dict[ColumnKey, tuple[object, object]]
    ) -> tuple[list, list] | None:
        """A row's cached render with each changed cell's text replaced, in the style it was drawn
        in; None where a cell is not plain text in one style (a Text, markup): the row is then drawn
        again from its cells."""
        fixed, scrollable = drawn
        if fixed or len(scrollable) != len(self.columns) + 1:  # the cells, then the row's filler
            return None
        scrollable = list(scrollable)
        pad = " " * self.cell_padding
        for column_key, (old, new) in cells.items():
            if not (_plain(old) and _plain(new)):
                return None
            index = self.get_column_index(column_key)
            inner = self.ordered_columns[index].get_render_width(self) - 2 * self.cell_padding
            was, now = (pad + str(v) + " " * (inner - cell_len(str(v))) + pad for v in (old, new))
            segments = scrollable[index]
            if "".join(s.text for s in segments) != was:  # (a wider value widened its column first)
                return None  # drawn from another value, under a key no longer used
            if len({_look(s.style) for s in segments}) != 1:
                return None
            scrollable[index] = [Segment(now, segments[0].style)]
        return fixed, scrollable

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a request's row: its detail; a slot's row has none."""
        known = self._record_cells.get(str(event.row_key.value))
        if known is not None:
            # its plot library is loaded on the first Enter, not before the first frame
            from tui.widgets.request_detail import RequestDetail

            self.app.push_screen(RequestDetail(known[0], known[1]))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        reverse = not self._sort[1] if self._sort and self._sort[0] == column else True
        self._sort = (column, reverse)
        self.sort(column, key=_sortable, reverse=reverse)
