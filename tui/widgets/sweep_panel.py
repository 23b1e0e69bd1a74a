"""The sweep: Run/Cancel, progress per point, the results table, the plot and where the files went.

A paired sweep shows note 25's table; a multi-arm one (seed 001's question, collectors/docs/draft-strategies.md)
its arm × class grid with the best arm per class by energy and by speed marked, acceptance below the
60 % line in yellow, and the summary's sentences (best arms, the 60 % line, width advice, settings)
under it. Every string comes from the summary, which may quote a server: it goes in as Text, never
as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Static

from collectors.fmt import num, pct, printable
from collectors.sweep.open_loop_tables import main_cells, open_loop_sentences
from collectors.sweep.plan import PointKey
from collectors.sweep.point import SweepPoint
from collectors.sweep.records import ArmsSummary, Summary
from collectors.sweep.schedule_check import check_summary
from collectors.sweep.sentences import band_interval, crossover_at, verdict_sentences
from collectors.sweep.summary import MAIN_COLUMNS, table_cells
from collectors.sweep.tables import arms_cells
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
    ("acc", "acc", 6),
    ("flags", "flags", 24),
)

# the arm x class grid: seed 001's columns from tables.ARMS_COLUMNS, without the verdict and flags words
ARMS_GRID = {
    "class": "class",
    "requests": "B",
    "arm": "arm",
    "best": "best",  # by energy, by speed or both: before the figures, so a narrow table shows it
    "tok/s": "tok/s",
    "acceptance": "accept",
    "mJ/token": "mJ/tk",
    "vs plain": "×plain",
    "speed": "speed",
    "G": "G",
    "width": "width",
    "W": "W",
}


def best_marks(summary: ArmsSummary) -> dict[tuple[str, int, str], str]:
    """(class, batch, arm): "energy", "speed" or "energy+speed", for the best arms of each class."""
    marks: dict[tuple[str, int, str], str] = {}
    for v in summary.verdicts:
        if not v.plain_trusted:
            continue
        for kind, arm in (("energy", v.best_energy), ("speed", v.best_speed)):
            key = (v.prompt_class, v.batch, arm)
            marks[key] = f"{marks[key]}+{kind}" if key in marks else kind
    return marks


def arms_verdict(summary: ArmsSummary) -> Text:
    """The multi-arm verdict in a few lines (the full sentences are in summary.md and `report`):
    best by energy and by speed, the 60 % line, the setting per class, what failed or counted."""
    verdicts = [v for v in summary.verdicts if v.plain_trusted]
    many = len({v.batch for v in verdicts}) > 1
    where = lambda v: v.prompt_class + (f" B={v.batch}" if many else "")  # noqa: E731
    out = Text()
    if not verdicts:
        return Text("No trustworthy plain point, so no arm is compared.", style="yellow")
    out.append("Best by energy: " + ", ".join(f"{where(v)} {v.best_energy}" for v in verdicts) + ".", "bold")
    speed = [f"{where(v)} {v.best_speed}" + (" (dearer)" if v.differ else "") for v in verdicts]
    out.append("\nBest by speed: " + ", ".join(speed) + ".")
    pct_line = round(100 * (summary.rule.acceptance_line or 0.0))
    below = [
        f"{where(v)}: {'all cost energy' if v.below_line_all_cost else 'not all cost energy'}"
        for v in verdicts
        if v.below_line
    ]
    if below:
        out.append(f"\nBelow {pct_line} % acceptance (yellow): " + "; ".join(below) + ".", "yellow")
    for v in verdicts:
        for setting in v.settings:
            out.append(f"\n{where(v)}: {printable(setting)}")
    scheduled = check_summary(summary.schedule or ())
    if scheduled:
        out.append("\n" + scheduled, "yellow" if "ABOVE" in scheduled else "")
    for w in summary.void_waived:
        out.append(f"\n{w.arm} drafted nothing on {w.prompt_class}, but drafts elsewhere: counted.", "dim")
    for arm, why in summary.failed_arms.items():
        out.append(
            f"\nArm {printable(arm)} failed: {printable(why.splitlines()[0] if why else '')}", "bold red"
        )
    return out


class SweepPanel(Vertical):
    DEFAULT_CSS = """
    SweepPanel #sweep-verdict { max-height: 9; }
    """

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
        self._columns(paired=True)

    def _columns(self, paired: bool) -> None:
        """The results table's columns: note 25's for a paired sweep, the arm grid's for a multi-arm one."""
        table = self.query_one("#sweep-table", DataTable)
        names = (
            [
                (name.replace(" mJ/token", " mJ").replace("acceptance", "accept"), name)
                for name, _, _ in MAIN_COLUMNS
            ]
            if paired
            else [(label, name) for name, label in ARMS_GRID.items()]
        )
        if [str(c.key.value) for c in table.columns.values()] == [key for _, key in names]:
            return
        table.clear(columns=True)
        for label, key in names:
            table.add_column(label, key=key)

    def set_running(self, running: bool) -> None:
        with self.app.batch_update():
            self.query_one("#sweep-run", Button).disabled = running
            self.query_one("#sweep-cancel", Button).disabled = not running

    def status(self, text: str, style: str = "") -> None:
        self.query_one("#sweep-status", Static).update(Text(text, style=style))

    def planned(self, schedule: tuple[PointKey, ...]) -> None:
        points = self.query_one("#sweep-points", DataTable)
        points.clear(columns=True)
        classes = any(k.prompt_class for k in schedule)  # a multi-arm sweep: "prose draft-16 before"
        rates = any(k.rate_rps is not None for k in schedule)  # open-loop points: "0.5/s" for B
        for label, key, width in POINT_COLUMNS:
            width = {"arm": 20, "flags": 16}.get(key, width) if classes else width
            width = 6 if rates and key == "batch" else width
            points.add_column(label, key=key, width=width)
        self.add_points(0, schedule)
        self.query_one("#sweep-table", DataTable).clear()
        self.query_one("#sweep-verdict", Static).update("")
        self.query_one(SweepPlot).show(None)

    def add_points(self, first_index: int, keys: tuple[PointKey, ...]) -> None:
        points = self.query_one("#sweep-points", DataTable)
        for i, key in enumerate(keys, start=first_index):
            points.add_row(
                str(key.batch) if key.rate_rps is None else f"{key.rate_rps:g}/s",
                (f"{key.prompt_class} " if key.prompt_class else "")
                + key.arm
                + (f" {key.phase}" if key.phase else ""),
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

    def point_done(self, index: int, row: SweepPoint) -> None:
        points = self.query_one("#sweep-points", DataTable)
        serious = [f for f in row.flags if f.code != "estimate"]
        state = "flagged" if serious else "done"
        values = {
            "state": Text(state, style=STATE_STYLE[state]),
            "tok_s": num(row.tok_s, ".1f"),
            "power": num(row.energy.power_w, ".1f"),
            "mj": num(row.energy.mj_per_token, ".0f"),
            "acc": pct(row.window.acceptance, 1),  # as the Requests tab shows it
            "flags": Text(",".join(f.code for f in row.flags), style="red" if serious else "dim"),
        }
        for column, value in values.items():
            points.update_cell(str(index), column, value)

    def show_summary(self, record: Summary) -> None:
        if isinstance(record, ArmsSummary):
            self._show_arms(record)
            return
        self._columns(paired=True)
        table = self.query_one("#sweep-table", DataTable)
        table.clear()
        _, cells = table_cells(record, MAIN_COLUMNS)
        for row, t in zip(cells, record.rows):
            style = "red" if t.void else ""
            table.add_row(*(Text(c, style=style) for c in row))
        if record.open_loop:  # each rate under the batches, "2/s" where a batch shows B
            for row, rate in zip(main_cells(record.open_loop), record.open_loop.rows):
                table.add_row(*(Text(c, style="red" if rate.void else "cyan") for c in row))
        self.query_one(SweepPlot).show(record)

    def _show_arms(self, summary: ArmsSummary) -> None:
        """The arm x class grid: the best arms marked, acceptance below the 60 % line in yellow."""
        self._columns(paired=False)
        table = self.query_one("#sweep-table", DataTable)
        table.clear()
        header, cells = arms_cells(summary)
        marks = best_marks(summary)
        line = summary.rule.acceptance_line or 0.0
        for row, t in zip(cells, summary.rows):
            mark = marks.get((t.prompt_class, t.batch, t.arm), "")
            style = "dim" if not t.figures.trusted else ("bold green" if "energy" in mark else "")
            values = {**dict(zip(header, row)), "best": mark}
            out = {name: Text(printable(values[name]), style=style) for name in ARMS_GRID}
            if t.figures.acceptance is not None and t.figures.acceptance < line:
                out["acceptance"].stylize("yellow")
            out["best"].stylize("bold green" if "energy" in mark else "cyan")
            table.add_row(*out.values())
        self.query_one(SweepPlot).show(summary)

    def show_saved(self, summary: Summary, run_dir: str) -> None:
        """A finished run read from its folder (the dialog's "show a saved run")."""
        self.planned(())
        self.ended(summary, run_dir, False, None)
        self.status(f"saved run: {printable(run_dir)}", "green")

    def _verdict(self, summary: Summary) -> Text:
        verdict = Text()
        if isinstance(summary, ArmsSummary):
            return arms_verdict(summary)
        if summary.rows or not summary.open_loop:  # a run of rates alone has no closed-loop verdict
            verdict.append(f"Recommendation: {summary.recommendation}.", style="bold")
        if summary.crossover:
            cross = summary.crossover
            verdict.append(
                f"  Crossover {crossover_at(cross)} requests (energy ratio 1.0), "
                f"{band_interval(cross)} within the ±{100 * cross.even_band:.0f} % band."
            )
        for sentence in open_loop_sentences(summary.open_loop)[1:] if summary.open_loop else []:
            if sentence.startswith("Open-loop"):  # its crossover and recommendation (cyan: its rows')
                verdict.append(("\n" if verdict.plain else "") + sentence, style="bold cyan")
        for sentence in verdict_sentences(summary):  # what the summary left out, and why
            if sentence.startswith(("No trustworthy pair", "Idle power not used", "Energy not measured")):
                verdict.append("\n" + sentence, style="yellow")
        return verdict

    def ended(self, record: Summary, run_dir: str, cancelled: bool, error: str | None) -> None:
        self.show_summary(record)
        verdict = self._verdict(record)
        self.query_one("#sweep-verdict", Static).update(verdict)
        if error:
            error = printable(error)  # may quote a server's answer or its log
            self.status(f"stopped: {error} — {record.points} points saved in {run_dir}", "bold red")
        elif cancelled:
            self.status(f"cancelled — {record.points} points saved in {run_dir}", "yellow")
        else:
            self.status(f"done — files in {run_dir}", "green")
        self.set_running(False)
