"""`spectop sweep`'s open-loop options (`--rate`, `--arrivals`, `--seed`, `--rate-requests`) and the
open-loop table the CLI and `spectop report` print (collectors/sweep/open_loop.py)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from rich.table import Table
from rich.text import Text

from collectors.sweep import plan as sweep_plan
from collectors.sweep.open_loop import parse_arrivals
from collectors.sweep.open_loop_tables import OPEN_TITLE, rate_cells, rate_flags
from collectors.sweep.records import OpenLoopSummary
from tui.commands import _common as opts


def add_load_options(parser: argparse.ArgumentParser) -> None:
    load = parser.add_argument_group(
        "open-loop load: requests arriving at a rate instead of B at once (paired sweep only)"
    )
    load.add_argument(
        "--rate",
        metavar="R,R,...",
        help="offered rates in requests/s, measured after the batches (alone with no --batches: only these)",
    )
    load.add_argument(
        "--arrivals",
        default="poisson",
        metavar="poisson|bursty[:CV]",
        help="arrival process: poisson (default), or bursty gamma gaps with coefficient of "
        "variation CV (default 2)",
    )
    load.add_argument(
        "--seed",
        type=opts.whole("--seed", 0, 2**31 - 1, 0),
        default=0,
        help="seed of the arrival times (default 0); plain and draft get the same times",
    )
    load.add_argument(
        "--rate-requests",
        type=opts.whole("--rate-requests", 1, sweep_plan.MAX_RATE_REQUESTS, 64),
        default=64,
        metavar="N",
        help="requests per open-loop point, each --tokens long (default 64)",
    )


def with_load(
    plan: sweep_plan.SweepPlan, args: argparse.Namespace, batches_given: bool
) -> sweep_plan.SweepPlan:
    """The plan with the open-loop points asked for; `--rate` without `--batches` runs rates only."""
    if not args.rate:
        return plan
    return replace(
        plan,
        batches=plan.batches if batches_given else (),
        rates=sweep_plan.parse_rates(args.rate),
        arrivals=parse_arrivals(args.arrivals).spec,
        arrival_seed=args.seed,
        rate_requests=args.rate_requests,
    )


def open_loop_table(record: OpenLoopSummary) -> Table:
    """The open-loop rows: each rate's achieved concurrency beside its figures, flagged rows coloured."""
    header, cells = rate_cells(record)
    table = Table(title=f"paired sweep, {OPEN_TITLE}", header_style="bold")
    for name in header:
        table.add_column(name, justify="left" if name in ("arrivals", "flags") else "right")
    for row, t in zip(cells, record.rows):
        style = "red" if t.void else ("yellow" if rate_flags(t) or not t.trusted else "")
        table.add_row(*(Text(c) for c in row), style=style)
    return table
