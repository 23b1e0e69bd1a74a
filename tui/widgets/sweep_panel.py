"""The sweep: Run/Cancel, progress per point, the results table, the plot and where the files went."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Static

from collectors.fmt import num, pct, printable
from collectors.sweep.plan import PointKey
from collectors.sweep.summary import MAIN_COLUMNS, table_cells
from collectors.sweep.tables import verdict_sentences
from tui.widgets.sweep_plot import SweepPlot

STATE_STYLE = {
    "pending": "dim",
    "starting server": "yellow",
    "warm-up": "yellow",
    "running": "bold yellow",
    "done": "green",
    "flagged": "bold red",
    "cancelled": "dim",
}
POINT_COLUMNS = (
    ("B", "batch", 2),
    ("arm", "arm", 12),
    ("state", "state", 8),
    ("tok/s", "tok_s", 6),
    ("W", "power", 5),
    ("mJ/tk", "mj", 5),
    ("acc", "acc", 4),
    ("flags", "flags", 24),
)


class SweepPanel(Vertical):
    """Owns its widgets; the App calls `planned`, `progressed`, `point_done` and `ended`."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="sweep-bar"):
            yield Button("Run sweep…", id="sweep-run", variant="primary", compact=True)
            yield Button("Cancel", id="sweep-cancel", variant="error", disabled=True, compact=True)
            yield Static(Text("no sweep yet: press s", style="dim"), id="sweep-status")
        with Horizontal(id="sweep-body"):
            yield DataTable(id="sweep-points", cursor_type="row", zebra_stripes=True)
            with Vertical(id="sweep-results"):
                yield DataTable(id="sweep-table", cursor_type="none")
                yield Static(id="sweep-verdict")
                yield SweepPlot(id="sweep-plot")

    def on_mount(self) -> None:
        points = self.query_one("#sweep-points", DataTable)
        for label, key, width in POINT_COLUMNS:
            points.add_column(label, key=key, width=width)
        table = self.query_one("#sweep-table", DataTable)
        for name, _, _ in MAIN_COLUMNS:
            table.add_column(name.replace(" mJ/token", " mJ").replace("acceptance", "accept"), key=name)

    def set_running(self, running: bool) -> None:
        with self.app.batch_update():
            self.query_one("#sweep-run", Button).disabled = running
            self.query_one("#sweep-cancel", Button).disabled = not running

    def status(self, text: str, style: str = "") -> None:
        self.query_one("#sweep-status", Static).update(Text(text, style=style))

    def planned(self, schedule: tuple[PointKey, ...]) -> None:
        self.query_one("#sweep-points", DataTable).clear()
        self.add_points(0, schedule)
        self.query_one("#sweep-table", DataTable).clear()
        self.query_one("#sweep-verdict", Static).update("")
        self.query_one(SweepPlot).show({"rows": [], "crossover": None})

    def add_points(self, first_index: int, keys: tuple[PointKey, ...]) -> None:
        points = self.query_one("#sweep-points", DataTable)
        for i, key in enumerate(keys, start=first_index):
            points.add_row(
                str(key.batch),
                key.arm + (f" {key.phase}" if key.phase else ""),
                Text("pending", style=STATE_STYLE["pending"]),
                "",
                "",
                "",
                "",
                "",
                key=str(i),
            )

    def progressed(self, index: int, state: str, total: int, label: str) -> None:
        points = self.query_one("#sweep-points", DataTable)
        points.update_cell(str(index), "state", Text(state, style=STATE_STYLE.get(state, "")))
        points.move_cursor(row=index)
        self.status(f"point {index + 1}/{total}: {label}: {state}", "bold")

    def point_done(self, index: int, row: dict[str, Any]) -> None:
        points = self.query_one("#sweep-points", DataTable)
        flags = row.get("flags", [])
        serious = [f for f in flags if f["code"] != "estimate"]
        state = "flagged" if serious else "done"
        values = {
            "state": Text(state, style=STATE_STYLE[state]),
            "tok_s": num(row.get("tok_s"), ".1f"),
            "power": num(row.get("power_w"), ".1f"),
            "mj": num(row.get("mj_per_token"), ".0f"),
            "acc": pct(row.get("acceptance")),
            "flags": Text(",".join(f["code"] for f in flags), style="red" if serious else "dim"),
        }
        for column, value in values.items():
            points.update_cell(str(index), column, value)

    def show_summary(self, summary: dict[str, Any]) -> None:
        table = self.query_one("#sweep-table", DataTable)
        table.clear()
        _, cells = table_cells(summary, MAIN_COLUMNS)
        for row, t in zip(cells, summary["rows"]):
            style = "red" if t["void"] else ""
            table.add_row(*(Text(c, style=style) for c in row))
        self.query_one(SweepPlot).show(summary)

    def ended(self, summary: dict[str, Any], run_dir: str, cancelled: bool, error: str | None) -> None:
        self.show_summary(summary)
        verdict = Text()
        verdict.append(f"Recommendation: {summary['recommendation']}.", style="bold")
        cross = summary.get("crossover")
        if cross:
            verdict.append(f"  Crossover ≈ {cross['batch']:g} requests.")
        for sentence in verdict_sentences(summary):  # what the summary left out, and why
            if sentence.startswith(("No trustworthy pair", "Idle power not used")):
                verdict.append("\n" + sentence, style="yellow")
        self.query_one("#sweep-verdict", Static).update(verdict)
        if error:
            error = printable(error)  # may quote a server's answer or its log
            self.status(f"stopped: {error} — {summary['points']} points saved in {run_dir}", "bold red")
        elif cancelled:
            self.status(f"cancelled — {summary['points']} points saved in {run_dir}", "yellow")
        else:
            self.status(f"done — files in {run_dir}", "green")
        self.set_running(False)
