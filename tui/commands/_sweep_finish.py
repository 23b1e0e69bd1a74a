"""The end of a headless sweep: its summary printed (or its JSON), and the exit code it earns.

Exit 3 (UNTRUSTED) names the batches and rates that had no trustworthy pair for a reason the user
did not choose (`--meter none` leaves energy unmeasured on purpose: that makes nothing untrusted).
"""

from __future__ import annotations

import sys

from collectors.export import json_forms
from collectors.fmt import printable
from collectors.sweep.codec import to_json
from collectors.sweep.events import SweepEnded
from collectors.sweep.records import PairedSummary, Summary
from tui.commands.report import any_verdict_lines, render_any


def finish(ended: SweepEnded, out, as_json: bool, interrupted: str | None) -> int:
    """Print the summary; the exit code. `interrupted` says how, when Ctrl-C or a signal stopped it."""
    record = ended.summary
    if as_json:
        print(
            json_forms.dumps(
                {
                    "run_dir": str(ended.run_dir),
                    "cancelled": ended.cancelled,
                    "error": ended.error,
                    "summary": to_json(record),
                },
                indent=2,
            )
        )
    else:
        out.print(render_any(record))
        for line in any_verdict_lines(record):
            out.print(line)
        out.print(f"files: {ended.run_dir}", markup=False)
    if ended.error or interrupted:
        error = printable(ended.error or "", keep_newlines=True)  # may quote a server or its log
        what = interrupted or ("interrupted" if ended.error == "interrupted" else f"stopped: {error}")
        print(
            f"spectop: sweep {what}; {record.points} completed points saved in {ended.run_dir}",
            file=sys.stderr,
        )
        return 1 if what.startswith("stopped:") else 130
    untrusted, rates = _untrusted_batches(record), _untrusted_rates(record)
    if untrusted or rates:
        where = [f"B={', '.join(str(b) for b in untrusted)}"] if untrusted else []
        where += [f"{', '.join(f'{r:g}' for r in rates)} requests/s"] if rates else []
        print(
            f"spectop: no trustworthy pair at {' and '.join(where)}: the result cannot be trusted there "
            f"(see the flags; files in {ended.run_dir})",
            file=sys.stderr,
        )
        return UNTRUSTED
    return 0


UNTRUSTED = 3  # the sweep finished, but some batch had no trustworthy pair
# `--meter none` asks for speed alone: energy left unmeasured on purpose makes no result untrusted
CHOSEN = {"no-meter"}


def _untrusted_batches(summary: Summary) -> list[int]:
    """The batches whose pair (or arm, in a multi-arm sweep) cannot be trusted for a reason the
    user did not choose."""
    # a multi-arm sweep lists a batch once per arm and class: name each batch once
    return sorted({u.batch for u in summary.untrusted if set(u.because) - CHOSEN})


def _untrusted_rates(summary: Summary) -> list[float]:
    """The open-loop rates whose pair cannot be trusted for a reason the user did not choose."""
    open_loop = summary.open_loop if isinstance(summary, PairedSummary) else None
    return [u.rate_rps for u in open_loop.untrusted if set(u.because) - CHOSEN] if open_loop else []
