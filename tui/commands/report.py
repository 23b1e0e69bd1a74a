"""`spectop report DIR`: re-render a saved sweep as a table, CSV, Markdown or JSON; `spectop report
FILE` on a recording (`--record FILE`): its per-request table and energy by batch level seen.

Pitfall handled: a saved run or a recording holds what servers said (model names, request ids,
errors) and may come from anywhere, so every string in it is made printable (`fmt.printable`)
before any is shown, and shown as plain text, never markup.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from rich.console import Group
from rich.table import Table
from rich.text import Text

from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.fmt import printable
from collectors.recording.reader import is_recording
from collectors.sweep.codec import from_json, to_json
from collectors.sweep.open_loop_tables import CLOSED_TITLE
from collectors.sweep.records import PairedSummary, Summary
from collectors.sweep.sentences import arms_sentences, to_markdown, verdict_sentences
from collectors.sweep.store import load_run
from collectors.sweep.summary import is_arms_run, summarize_record, summary_of
from collectors.sweep.tables import (
    DETAIL_COLUMNS,
    MAIN_COLUMNS,
    Column,
    arms_cells,
    table_cells,
    to_table_csv,
)
from collectors.sweep.textfile import write_textfile
from tui.commands import _common as opts
from tui.commands import _report_ledger
from tui.commands._report_recording import printable_json, report_recording
from tui.commands._report_requests import per_request_view
from tui.commands._sweep_load import open_loop_table

R = TypeVar("R")

NAME = "report"
HELP = "re-render a saved sweep, summarise a recording, or the energy ledger over days (--since)"
DESCRIPTION = (
    "Re-render the results of a sweep from its folder, or summarise a recording (--record FILE): "
    "its requests and its energy by batch level; or, with --since 7d, the energy ledger that export and "
    "the dashboard keep: kWh, tokens, mJ/token, drafting paid, a schedule's saving and cost."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dir",
        type=Path,
        nargs="?",
        metavar="DIR",
        help="a folder written by spectop sweep, or a --record file",
    )
    _report_ledger.add_report_options(parser)
    parser.add_argument(
        "--format",
        choices=("table", "csv", "markdown", "json"),
        default="table",
        help="a table for the terminal (whole when written to a file), CSV, Markdown or JSON (default table)",
    )
    parser.add_argument(
        "--textfile",
        type=Path,
        metavar="FILE.prom",
        help="also write the sweep's table and crossover as Prometheus series, for node_exporter's "
        "textfile collector (a paired sweep)",
    )


def run(args: argparse.Namespace) -> int:
    if args.since is not None or args.run_dir is None or args.price is not None or args.ledger is not None:
        return _report_ledger.checked_run(args)
    if args.run_dir.is_file() and is_recording(args.run_dir):
        return report_recording(args)
    skipped: list[str] = []
    meta, rows = load_run(args.run_dir, skipped)
    meta, rows = printable_record(meta), [printable_record(r) for r in rows]
    if skipped:  # a torn last line, a corrupt line: the report is made from what is whole
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        print(f"spectop report: skipped {printable(skipped[0])}{more}", file=sys.stderr)
    record = summary_of(rows, meta)
    summary = summarize_record(record)
    if args.textfile:
        if is_arms_run(meta, rows):
            raise SpectopError(
                "--textfile writes a paired sweep's series, and this is a multi-arm run",
                "give the folder of a plain-against-draft sweep over batches",
            )
        assert isinstance(record, PairedSummary)  # not a multi-arm run, said above
        write_textfile(record, args.textfile, args.run_dir.name)
        print(f"spectop report: wrote {args.textfile}", file=sys.stderr)
    if args.format == "json":
        print(json_forms.dumps(summary, indent=2))
    elif args.format == "csv":
        print(to_table_csv(record), end="")
    elif args.format == "markdown":
        print(to_markdown(record), end="")
    else:
        out = opts.console()
        out.print(render_any(record))
        for line in any_verdict_lines(record):
            out.print(line)
        out.print(per_request_view(rows))
    return 0


def render_any(record: Summary) -> Table | Group:
    """The paired sweep's tables, or the multi-arm sweep's one (seed 001's, per class)."""
    if isinstance(record, PairedSummary):
        return render_summary(record)
    header, cells = arms_cells(record)
    table = Table(title="multi-arm sweep: each arm against plain, per prompt class", header_style="bold")
    for name in header:
        table.add_column(name, justify="left" if name in ("class", "arm", "verdict", "flags") else "right")
    for row, t in zip(cells, record.rows):
        style = "yellow" if t.figures.flags or not t.figures.trusted else ""
        table.add_row(*(Text(c) for c in row), style=style)
    return table


def any_verdict_lines(record: Summary) -> list[Text]:
    if isinstance(record, PairedSummary):
        return verdict_lines(record)
    lines = [
        Text(s, style="bold" if s.lstrip().startswith("Setting:") else ("yellow" if " failed" in s else ""))
        for s in arms_sentences(record)
    ]
    if record.flags:
        lines.append(Text("Flags: " + ", ".join(record.flags) + " (see points.jsonl)", style="yellow"))
    return lines


def printable_record(record: R) -> R:
    """A record read from a saved run with every string in it made printable (through its JSON form)."""
    clean: R = from_json(type(record), printable_json(to_json(record)))
    return clean


def render_summary(summary: PairedSummary) -> Group:
    """Note 25's table (collectors/docs/note25.md), then what the ledger adds (collectors/docs/energy-ledger.md); flagged rows are coloured so nothing passes unseen."""
    tables = [
        _table(summary, MAIN_COLUMNS, "paired sweep: draft against plain"),
        _table(summary, DETAIL_COLUMNS, "drafting, net energy and latency (plain/draft)"),
    ]
    if summary.open_loop is None:
        return Group(*tables)
    # each table says which load its figures came from
    closed = [_retitled(t, CLOSED_TITLE) for t in tables] if summary.rows else []
    return Group(*closed, open_loop_table(summary.open_loop))


def _retitled(table: Table, load: str) -> Table:
    table.title = f"{table.title} ({load})"
    return table


def _table(summary: PairedSummary, columns: Sequence[Column], title: str) -> Table:
    header, cells = table_cells(summary, columns)
    table = Table(title=title, header_style="bold")
    for name in header:
        table.add_column(name, justify="left" if name == "flags" else "right")
    for row, t in zip(cells, summary.rows):
        flagged = bool(set(t.plain.flags) | set(t.draft.flags))
        style = "red" if t.void else ("yellow" if flagged or not t.trusted else "")
        table.add_row(*(Text(c) for c in row), style=style)
    return table


def verdict_lines(summary: PairedSummary) -> list[Text]:
    """The summary's sentences (the same as summary.md's), then what a terminal reader should notice."""
    lines = []
    for sentence in verdict_sentences(summary):
        if sentence.startswith("Recommendation:"):
            lines.append(Text(sentence, style="bold"))
        elif sentence.startswith("Open-loop recommendation:"):
            lines.append(Text(sentence, style="bold"))
        elif sentence.startswith(("No trustworthy pair", "Idle power not used", "Energy not measured")):
            lines.append(Text(sentence, style="yellow"))
        else:
            lines.append(Text(sentence))
    planned = summary.planned_points
    if planned and summary.points < planned:
        lines.append(Text(f"Partial run: {summary.points} of {planned} points.", style="yellow"))
    if summary.flags:
        lines.append(
            Text(
                "Flags: " + ", ".join(summary.flags) + " (see points.jsonl for each point's reason)",
                style="yellow",
            )
        )
    return lines
