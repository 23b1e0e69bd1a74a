"""`spectop report FILE` on a recording: its requests (with each one's joules, tokens per joule and
energy-delay product), the acceptance histogram over them, verify steps by tokens accepted, and
its energy by batch level seen.

Pitfall handled: a recording holds what servers said (model names, request ids, errors) and may
come from anywhere, so every string in it is made printable before any is shown, as plain text.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.table import Table
from rich.text import Text

from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.fmt import num, pct, printable
from collectors.recording.reader import read_recording
from collectors.recording.report import summarize_recording
from tui.commands import _common as opts
from tui.widgets.figures import count_bars

BAR_CELLS = 30


def printable_json(value: Any) -> Any:
    """A JSON value with every string in it, keys too, made printable."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [printable_json(v) for v in value]
    if isinstance(value, dict):
        return {printable_json(k): printable_json(v) for k, v in value.items()}
    return value


def report_recording(args: argparse.Namespace) -> int:
    """A recording's requests and its energy at each busy-slots level (table or JSON)."""
    if args.format in ("csv", "markdown"):
        raise SpectopError(
            f"report on a recording prints a table or JSON, not {args.format}", "use --format table or json"
        )
    recording = read_recording(args.run_dir)
    if recording.skipped:
        more = f" and {len(recording.skipped) - 1} more" if len(recording.skipped) > 1 else ""
        print(f"spectop report: skipped {printable(recording.skipped[0])}{more}", file=sys.stderr)
    summary = printable_json(summarize_recording(recording))
    if args.format == "json":
        print(json_forms.dumps(summary, indent=2))
        return 0
    out = opts.console()
    out.print(
        Text(f"recording of {summary['server_url']}: {summary['duration_s']:.1f} s, {summary['polls']} polls")
    )
    out.print(recording_requests_table(summary["requests"]))
    for line in histogram_lines(summary["acceptance_histogram"], summary["accepted_per_step"]):
        out.print(line)
    out.print(batch_levels_table(summary["batch_levels"]))
    return 0


REQUEST_COLUMNS = (
    "request", "source", "tokens", "drafted", "accepted", "acceptance", "G", "tok/s", "mJ/token",
    "J", "tok/J", "EDP J·s", "TTFT ms", "gap p95", "gap p99",
)  # fmt: skip


def recording_requests_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(
        title="requests (mJ/token and J: the meter's energy split by tokens; * shared with unseen traffic; "
        "EDP: J × e2e s)"
    )
    for name in REQUEST_COLUMNS:
        table.add_column(name, justify="left" if name in ("request", "source") else "right")
    for r in rows:
        star = "*" if r["shared"] and r["mj_per_token"] else ""
        cells = (
            r["request_id"],
            r["source"],
            num(r["tokens"], "d"),
            num(r["drafted"], "d"),
            num(r["accepted"], "d"),
            pct(r["acceptance"], 1),
            num(r["mean_advance"], ".2f"),
            num(r["tok_s"], ".1f"),
            num(r["mj_per_token"], ".0f") + star,
            num(r.get("energy_j"), ".2f") + (star if r.get("energy_j") else ""),
            num(r.get("tokens_per_j"), ".2f"),
            num(r.get("edp_js"), ".2f"),
            num(r["ttft_ms"], ".0f"),
            num(r["gap_p95_ms"], ".1f"),
            num(r["gap_p99_ms"], ".1f"),
        )
        table.add_row(*(Text(c) for c in cells), style="red" if r["error"] else "")
    return table


def histogram_lines(by_request: dict[str, Any], per_step: dict[str, Any] | None) -> list[Text]:
    """The acceptance histogram over requests and the share of verify steps by tokens accepted."""
    lines = [Text("acceptance over requests (accepted / drafted per request)", style="bold")]
    if sum(by_request["requests"]):
        lines += count_bars(by_request["bins"], by_request["requests"], BAR_CELLS)
    if by_request["without_counts"]:
        lines.append(
            Text(
                f"{by_request['without_counts']} without the server's drafted counts, or nothing drafted",
                "dim",
            )
        )
    if per_step is None:
        lines.append(Text("verify steps by tokens accepted: the server's counters have no positions", "dim"))
        return lines
    lines.append(
        Text(f"verify steps by tokens accepted ({per_step['steps']:,} steps, the server's counters)", "bold")
    )
    labels = [f"{j} accepted" for j in range(len(per_step["share"]))]
    lines += count_bars(labels, per_step["share"], BAR_CELLS, ".0%")
    return lines


def batch_levels_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="energy by batch level seen (busy slots: each poll window's mean concurrency)")
    for name in ("busy slots", "time s", "joules", "tokens", "mJ/token"):
        table.add_column(name, justify="right")
    left_out = sum(r.get("windows_left_out", 0) for r in rows)
    if left_out:
        windows = "window" if left_out == 1 else "windows"
        table.caption = f"{left_out} poll {windows} left out: the meter did not cover them"
    for r in rows:
        joules = num(r["energy_j"], ".1f") if r["energy_j"] is not None else "not covered"
        cells = (
            str(r["busy_slots"]),
            num(r["time_s"], ".1f"),
            joules,
            str(r["tokens"]),
            num(r["mj_per_token"], ".0f"),
        )
        table.add_row(*(Text(c) for c in cells))
    return table
