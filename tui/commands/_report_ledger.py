"""`spectop report --since 7d`: the energy ledger over a period, and the `--ledger`/`--no-ledger`
options of the commands that keep it (export, the dashboard).

The figures are collectors/ledgerdb/summary.py's (defined in collectors/docs/figures.md); this module
only parses the options and prints. Server URLs in the ledger are shown as plain text, never markup.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from collectors.errors import SpectopError
from collectors.fmt import num, pct
from collectors.ledgerdb.summary import J_PER_KWH, LedgerSummary, summarize
from tui.commands import _common as opts

if TYPE_CHECKING:  # SQLite, platformdirs and the verdict's sweep code load when a ledger is used
    from collectors.ledgerdb.store import EnergyStore

DEFAULT_PATH = "energy-ledger.sqlite in the user's data folder: ~/.local/share/spectop on Linux"

_UNITS_S = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
BAR_WIDTH = 30


def add_keep_options(parser: argparse.ArgumentParser) -> None:
    """--ledger / --no-ledger for a command that records the energy ledger while it runs."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--ledger",
        type=Path,
        metavar="PATH",
        help=f"keep the energy ledger (kWh, tokens by hour and batch; spectop report --since) in PATH "
        f"(default {DEFAULT_PATH})",
    )
    group.add_argument("--no-ledger", action="store_true", help="keep no energy ledger")


def open_store(args: argparse.Namespace) -> EnergyStore | None:
    """The ledger the options ask for, or None with --no-ledger."""
    from collectors.ledgerdb.store import EnergyStore, default_path

    if getattr(args, "no_ledger", False):
        return None
    return EnergyStore(args.ledger or default_path())


@contextmanager
def kept(store: EnergyStore | None, servers: Sequence[Any]) -> Iterator[None]:
    """The dashboard's servers keep the ledger while the app runs, written from a thread of its own
    (the UI thread never waits on the disk) every `HOLD_S` of polls; servers sharing a meter keep
    none (see export)."""
    if store is None:
        yield
        return
    from collectors.ledgerdb.background import BackgroundStore
    from collectors.ledgerdb.writer import HOLD_S, LedgerWriter

    sink = BackgroundStore(store)
    for server in servers:
        shared = server.sampler is None or sum(s.sampler is server.sampler for s in servers) > 1
        if not shared:
            server.state.keeper = LedgerWriter(sink, server.url, hold_s=HOLD_S)
    try:
        yield
    finally:  # the windows held go in before the store closes: quitting loses none
        for server in servers:
            if server.state.keeper is not None:
                server.state.keeper.write_held()
        sink.close()


def add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        type=since_s,
        metavar="AGE",
        help="report the energy ledger over the last AGE (7d, 36h, 90m, 2w) instead of a saved run",
    )
    parser.add_argument(
        "--price",
        metavar="PRICE|FILE.csv",
        help="with --since: the price per kWh, or a time-of-use CSV of HH:MM-HH:MM,price lines (local time)",
    )
    parser.add_argument(
        "--ledger",
        type=Path,
        metavar="PATH",
        help=f"with --since: the ledger to read (default {DEFAULT_PATH})",
    )


def since_s(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text)
    if match is None or float(match[1]) <= 0:
        raise SpectopError(f"--since {text!r} is no age", "give e.g. --since 7d, 36h, 90m or 2w")
    return float(match[1]) * _UNITS_S[match[2]]


def checked_run(args: argparse.Namespace) -> int:
    """report's ledger path: --since with no DIR; a DIR with --since, or neither, is a mistake."""
    if args.run_dir is not None and args.since is not None:
        raise SpectopError("report takes a DIR or --since, not both", "drop one of them")
    if args.run_dir is not None:
        raise SpectopError(
            "--price and --ledger go with --since", "e.g. spectop report --since 7d --price 0.30"
        )
    if args.since is None:
        raise SpectopError(
            "report needs a DIR (a sweep or a recording) or --since AGE", "e.g. spectop report --since 7d"
        )
    return run(args)


def run(args: argparse.Namespace, now_unix_s: float | None = None) -> int:
    if args.format not in ("table", "json"):
        raise SpectopError(
            f"report --since prints a table or JSON, not {args.format}", "use --format table or json"
        )
    from collectors.ledgerdb.prices import parse_price
    from collectors.ledgerdb.store import EnergyStore, default_path

    price = parse_price(args.price) if args.price is not None else None
    path = args.ledger or default_path()
    if not path.is_file():
        raise SpectopError(
            f"no energy ledger at {path}", "spectop export and the dashboard keep one; or give --ledger PATH"
        )
    since_unix_s = (time.time() if now_unix_s is None else now_unix_s) - args.since
    with EnergyStore(path) as store:
        summary = summarize(store.hours(since_unix_s), price)
    if args.format == "json":
        opts.print_json(as_json(summary))
        return 0
    out = opts.console()
    for line in lines(summary, path):
        out.print(line)
    if summary.levels:
        out.print(levels_table(summary))
    return 0


def _when(unix_s: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(unix_s)) if unix_s is not None else "—"


def kwh(energy_j: float, unit: str = " kWh") -> str:
    """Three decimals, or four significant digits below 1 kWh (a small server's day is not 0.000)."""
    value = energy_j / J_PER_KWH
    return (f"{value:.3f}" if value >= 1 or value == 0 else f"{value:.4g}") + unit


def lines(s: LedgerSummary, path: Path) -> list[Text]:
    if not s.servers:
        return [Text(f"energy ledger {path}: nothing recorded in this period")]
    said = [
        Text(
            f"energy ledger {path}: {', '.join(s.servers)}, {_when(s.first_unix_s)} to {_when(s.last_unix_s)} "
            f"local time, {s.seconds / 3600:.1f} h recorded"
        ),
        Text(f"  energy         {kwh(s.energy_j)} (idle {kwh(s.idle_j)})"),
        Text(f"  tokens         {s.tokens:,} committed, acceptance {pct(s.acceptance)}"),
        Text(
            f"  mJ/token       {num(s.mj_per_token, '.1f')} (joules of the windows with tokens over their tokens)"
        ),
    ]
    if s.paid_share is None:
        said.append(
            Text("  drafting paid  — no sweep was known while recording, so no verdict (export --sweep DIR)")
        )
        said.append(Text("  a schedule     — needs a sweep's curves to say where drafting cost more"))
    else:
        said.append(
            Text(
                f"  drafting paid  {pct(s.paid_share)} of the {s.judged_s / 3600:.1f} h of drafting the sweep judged"
            )
        )
        share = s.saving_j / s.energy_j if s.energy_j else 0.0
        said.append(
            Text(
                f"  a schedule     would have saved {kwh(s.saving_j)} ({pct(share, 1)}) "
                "with drafting off where it cost more than plain"
            )
        )
    if s.cost is not None:
        said.append(Text(f"  cost           {s.cost:.2f} at {s.price}"))
    return said


def levels_table(s: LedgerSummary) -> Table:
    table = Table(title="mJ/token by batch level over the period (requests per decode)")
    for name in ("batch", "hours", "kWh", "tokens", "mJ/token", ""):
        table.add_column(name, justify="left" if not name else "right")
    top = max((level.mj_per_token or 0.0 for level in s.levels), default=0.0)
    for level in s.levels:
        mj = level.mj_per_token
        bar = "█" * max(1, round(BAR_WIDTH * mj / top)) if mj and top else ""
        cells = (
            str(level.batch_level) if level.batch_level else "idle",
            f"{level.seconds / 3600:.2f}",
            kwh(level.energy_j, ""),
            f"{level.tokens:,}",
            num(mj, ".1f"),
            bar,
        )
        table.add_row(*(Text(c) for c in cells))
    return table


def as_json(s: LedgerSummary) -> dict[str, Any]:
    return {
        "servers": list(s.servers),
        "first_unix_s": s.first_unix_s,
        "last_unix_s": s.last_unix_s,
        "recorded_s": s.seconds,
        "kwh": s.kwh,
        "idle_kwh": s.idle_j / J_PER_KWH,
        "tokens": s.tokens,
        "acceptance": s.acceptance,
        "mj_per_token": s.mj_per_token,
        "drafting_s": s.drafting_s,
        "judged_s": s.judged_s,
        "drafting_paid_share": s.paid_share,
        "schedule_saving_kwh": s.saving_j / J_PER_KWH if s.judged_s else None,
        "cost": s.cost,
        "price": s.price,
        "batch_levels": [
            {"batch_level": lv.batch_level, "seconds": lv.seconds, "energy_j": lv.energy_j,
             "tokens": lv.tokens, "mj_per_token": lv.mj_per_token}
            for lv in s.levels
        ],
    }  # fmt: skip
