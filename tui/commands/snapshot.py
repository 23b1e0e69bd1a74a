"""`spectop snapshot`: poll a server and print what the dashboard would show.

Window figures are the window's or "—" (never lifetime counters in their place, which have rows
of their own); an approximate one is marked ≈ with a note saying why.
"""

from __future__ import annotations

import argparse
import asyncio

from rich.markup import escape
from rich.table import Table

from collectors.errors import ServerUnreachable, SpectopError
from collectors.export import json_forms
from collectors.fmt import MISSING, num, pct
from collectors.http import make_client
from collectors.meters import Sampler, sampling
from collectors.meters.sampler import mark_at_poll
from collectors.servers import ServerSnapshot, check_url, detect, open_collector, registry
from collectors.servers.latency import ServerLatency, window_latency
from tui.commands import _common as opts

LABELS = {"ttft": "TTFT", "itl": "inter-token", "tpot": "TPOT", "e2e": "end-to-end", "queue": "queue"}
NAME = "snapshot"
HELP = "poll a server once and print what spectop sees"
DESCRIPTION = "Poll a server and print its identity, load and drafting figures."


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "server", "api-key", "json", "meter")
    parser.add_argument(
        "--window",
        type=opts.seconds("--window", 0.0, opts.MAX_SECONDS, 1.0),
        default=1.0,
        metavar="S",
        help="seconds between two polls, for live rates (0: one poll, no rates; default 1)",
    )


# the wait between the window's two polls (a test sends its traffic here instead of sleeping)
between_polls = asyncio.sleep


async def take(url: str, key: str | None, window_s: float, sampler: Sampler | None = None) -> ServerSnapshot:
    return (await take_window(url, key, window_s, sampler))[0]


async def take_window(
    url: str, key: str | None, window_s: float, sampler: Sampler | None = None
) -> tuple[ServerSnapshot, ServerLatency | None]:
    """The window's last poll, and the server's own latency between its two polls where it exports it."""
    url = check_url(url)
    client = make_client(key)
    latency = None
    try:
        collector = open_collector(url, await detect(url, client), client=client)
        await mark_at_poll([sampler])  # the window's ends read on a counter meter too
        snap = first = await collector.poll()
        if window_s > 0 and snap.ok:
            await between_polls(window_s)
            await mark_at_poll([sampler])
            snap = await collector.poll()
            if first.latency_counters is not None and snap.latency_counters is not None:
                latency = window_latency(
                    first.latency_counters, snap.latency_counters, snap.taken_at_s - first.taken_at_s
                )
    finally:
        await client.aclose()
    if snap.status in ("unreachable", "error"):  # nothing to show but why: one line, exit 2
        raise (ServerUnreachable if snap.status == "unreachable" else SpectopError)(
            snap.error or url, snap.fix or ""
        )
    return snap, latency


def run(args: argparse.Namespace) -> int:
    with sampling(args.meter) as sampler:
        snap, latency = asyncio.run(take_window(args.server, opts.api_key(args), args.window, sampler))
        energy = (
            json_forms.energy_dict(
                sampler, snap.taken_at_s - snap.window_s, snap.taken_at_s, snap.window_tokens
            )
            if snap.window_s
            else None
        )
    if args.json:
        body = json_forms.snapshot_dict(snap)
        opts.print_json({**body, "energy": energy, "server_latency": json_forms.server_latency_dict(latency)})
    else:
        table = render(snap)
        for name, value in latency_rows(latency):
            table.add_row(name, value)
        for name, value in opts.energy_rows(energy) if energy or args.meter == "none" else []:
            table.add_row(name, value)
        opts.console().print(table)
    return 0


def render(snap: ServerSnapshot) -> Table:
    """A two-column table; every server-provided string is escaped."""
    table = Table(title=f"{escape(snap.backend)} at {escape(snap.url)}", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()

    def window(text: str) -> str:  # a window figure that may be off says so
        return f"≈ {text}" if snap.window_approximate and text != MISSING else text

    rows = [
        ("status", escape(snap.status) + (f" — {escape(snap.error)}" if snap.error else "")),
        ("model", escape(snap.model or "—")),
        ("build", escape(snap.build or "—")),
        ("slots", f"{num(snap.slots_busy, 'd')} busy of {num(snap.slots_total, 'd')}"),
        ("deferred", num(snap.requests_deferred, "d")),
        ("drafting", _drafting(snap) + (f" ({escape(snap.spec_types)})" if snap.spec_types else "")),
        (
            "tokens/s (live)",
            num(snap.live_tok_s)
            + ("" if snap.live_tok_s_exact or snap.live_tok_s is None else " (lower bound)"),
        ),
        ("busy slots per decode", num(snap.busy_slots_per_decode, ".2f")),
        ("acceptance", window(pct(snap.acceptance, 1))),
        ("mean committed advance G", window(num(snap.mean_advance, ".2f"))),
        ("G per drafted step", window(num(snap.advance_per_drafted_step, ".2f"))),
        ("verified width", window(num(snap.verified_width, ".2f"))),
        ("survival S_j", window(" ".join(f"{s:.2f}" for s in snap.survival) or MISSING)),
        ("acceptance (lifetime)", pct(snap.acceptance_lifetime, 1)),
        ("G (lifetime)", num(snap.mean_advance_lifetime, ".2f")),
        ("tokens generated (total)", num(snap.tokens_predicted_total, "d")),
        ("drafted / accepted (total)", f"{num(snap.drafted_total, 'd')} / {num(snap.accepted_total, 'd')}"),
        ("/metrics", escape(snap.metrics_status)),
    ]
    dialect = registry.find(snap.backend)
    if dialect is not None and dialect.load_endpoint:
        rows.append((dialect.load_endpoint, escape(snap.slots_status)))
    rows += [("note", note) for note in _notes(snap)]
    for name, value in rows:
        table.add_row(name, value)
    return table


def latency_rows(latency: ServerLatency | None) -> list[tuple[str, str]]:
    """The server's own tails over the window (ms), cache hit ratio and finish reasons, where exported."""
    if latency is None:
        return []
    rows = [
        (
            f"server {LABELS[kind]} p50/p95/p99",
            f"{num(tail.p50_ms, '.1f')} / {num(tail.p95_ms, '.1f')} / {num(tail.p99_ms, '.1f')} ms "
            f"({tail.observations} observed)",
        )
        for kind, tail in latency.tails.items()
    ]
    if latency.cache_hit_ratio is not None:
        rows.append(("server prefix cache hits", pct(latency.cache_hit_ratio, 1)))
    if latency.finished:
        rows.append(("server finish reasons", ", ".join(f"{escape(r)} {n}" for r, n in latency.finished)))
    return rows


def _notes(snap: ServerSnapshot) -> list[str]:
    """Why a window figure is unknown or approximate, where the snapshot says."""
    dialect = registry.find(snap.backend)
    notes = dialect.snapshot_notes(snap) if dialect is not None else []
    if snap.counters_rounded:
        notes.append(
            "the server prints counters past 10⁶ with 6 significant digits: window figures are "
            "approximate, and unknown where the rounding could swamp them"
        )
    if snap.window_steps is not None and not snap.window_steps_exact:
        notes.append(
            "a request may have run entirely between the polls unseen: each adds one step, so G "
            "and S_j may read a little low"
        )
    if snap.restarted:
        notes.append("the server restarted between polls; window figures start over")
    return notes


def _drafting(snap: ServerSnapshot) -> str:
    if snap.drafting is None:
        dialect = registry.find(snap.backend)
        return f"unknown ({dialect.drafting_unknown_reason if dialect else 'the server does not say'})"
    return "yes" if snap.drafting else "no: this server drafts nothing"
