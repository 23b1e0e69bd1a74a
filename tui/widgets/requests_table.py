"""One row per request spectop can see: its own probes and sweep requests, and the server's busy slots."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.widgets import DataTable

from collectors.fmt import num, pct
from collectors.model import RequestRecord
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
    text = str(cell.plain if isinstance(cell, Text) else cell).replace("%", "").strip()
    try:
        return (0, float(text))
    except ValueError:
        return (1, text)


class RequestsTable(DataTable):
    """Rows keyed by request id (or slot); updated in place; click a header to sort by it."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for label, key in COLUMNS:
            self.add_column(label, key=key)
        self._sort: tuple[str, bool] | None = None

    def record_cells(self, r: RequestRecord, mj: float | None) -> list[object]:
        lat = r.latency
        who = Text(r.tag.split(":")[0] or "client", style="red" if r.error else "")
        return [
            r.request_id,
            who,
            num(r.committed_tokens, "d"),
            pct(r.acceptance),
            num(r.verified_width, ".2f"),
            num(r.concurrency_mean, ".1f"),
            num(r.mean_advance, ".2f"),
            num(r.tok_s, ".1f"),
            num(mj, ".0f"),
            num(lat.ttft_ms, ".0f"),
            num(lat.chunk_gaps.p50_ms, ".1f"),
            num(lat.chunk_gaps.p95_ms, ".1f"),
            num(lat.chunk_gaps.p99_ms, ".1f"),
            num(lat.chunk_gaps.max_ms, ".1f"),
        ]

    def show(
        self,
        records: Iterable[RequestRecord],
        attributed_mj: dict[str, float],
        snapshot: ServerSnapshot | None,
        slot_states: Iterable[tuple[int, int]] = (),
        slot_tok_s: dict[int, float] | None = None,
    ) -> None:
        """Replace the rows: busy slots first (live), then spectop's own requests, newest first."""
        wanted: dict[str, list[object]] = {}
        for slot_id, n_decoded in slot_states:
            busy = num(snapshot.slots_busy, "d") if snapshot else "—"
            rate = num((slot_tok_s or {}).get(slot_id), ".1f")
            wanted[f"slot-{slot_id}"] = [
                f"slot {slot_id}",
                Text("server", style="cyan"),
                str(n_decoded),
                "—",
                "—",
                busy,
                "—",
                rate,
                "—",
                "—",
                "—",
                "—",
                "—",
                "—",
            ]
        for r in reversed(list(records)):
            wanted[r.request_id] = self.record_cells(r, attributed_mj.get(r.request_id))
        for key in [k.value for k in self.rows if k.value not in wanted]:
            self.remove_row(key)
        for key, cells in wanted.items():
            if key in self.rows:
                for (_, column), value in zip(COLUMNS, cells):
                    self.update_cell(key, column, value)
            else:
                self.add_row(*cells, key=key)
        if self._sort:
            self.sort(self._sort[0], key=_sortable, reverse=self._sort[1])

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        reverse = not self._sort[1] if self._sort and self._sort[0] == column else True
        self._sort = (column, reverse)
        self.sort(column, key=_sortable, reverse=reverse)
