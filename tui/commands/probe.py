"""`spectop probe`: send one streamed request and print its record."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

from rich.markup import escape
from rich.table import Table

from collectors.energy import unseen
from collectors.energy.attribution import activity, shared_with_unseen
from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.fmt import num, pct
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters import sampling
from collectors.requests.client import DEFAULT_PROMPT, RequestSpec, stream_request
from collectors.requests.record import RequestRecord
from collectors.servers import check_url, default_route, detect, open_collector, registry
from collectors.servers.base import Collector
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.plan import MAX_TOKENS
from tui.commands import _common as opts

NAME = "probe"
HELP = "send one streamed request and print its figures"
DESCRIPTION = (
    "Send one streamed request at temperature 0 and print "
    "tokens, drafting, speed and latency tails as the stream showed them."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "server", "api-key", "json", "meter")
    parser.add_argument(
        "--tokens",
        type=opts.whole("--tokens", 1, MAX_TOKENS, 128),
        default=128,
        metavar="N",
        help="tokens to generate (default 128)",
    )
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, metavar="TEXT", help="prompt text")
    parser.add_argument(
        "--route",
        choices=("completion", "chat"),
        default=None,
        help="llama-server native /completion or OpenAI /v1/chat/completions "
        "(default: completion on llama-server, chat elsewhere)",
    )


POLL_S = 0.5  # the server's token counts are read this often while the probe runs


async def send(
    args: argparse.Namespace, mark: Callable[[], object] | None = None
) -> tuple[RequestRecord, list[ServerSnapshot]]:
    """The probe's record, and the server's polls from before it was sent to after it ended; `mark`
    reads the meter at the request's send and last token."""
    url = check_url(args.server)
    if args.tokens < 1:
        raise SpectopError(f"--tokens must be at least 1, not {args.tokens}", "e.g. --tokens 128")
    client = make_client(opts.api_key(args), STREAM_TIMEOUT)
    try:
        backend = await detect(url, client)
        route = args.route or default_route(backend)
        spec = RequestSpec(prompt=args.prompt, max_tokens=args.tokens, route=route, dialect=backend)
        collector = open_collector(url, backend, client=client)
        polls = [await collector.poll()]  # the base the first window counts from
        async with polling(collector, POLL_S) as during:
            record = await stream_request(
                client, url, spec, busy_probe=collector.busy_slots, tag="probe", mark=mark
            )
        polls += [*during, await collector.poll()]
        return record, polls
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def polling(collector: Collector, period_s: float) -> AsyncIterator[list[ServerSnapshot]]:
    """The collector's snapshots every `period_s` while the block runs; stopped by a flag as well
    as a cancel (a cancel can be swallowed by a bounded read, collectors/requests/client.py)."""
    polls: list[ServerSnapshot] = []
    stopped = False

    async def poll() -> None:
        while not stopped:
            await asyncio.sleep(period_s)
            snap = await collector.poll()
            if not stopped:
                polls.append(snap)

    task = asyncio.create_task(poll())
    try:
        yield polls
    finally:
        stopped = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def run(args: argparse.Namespace) -> int:
    with sampling(args.meter) as sampler:
        record, polls = asyncio.run(send(args, sampler.mark if sampler else None))  # meter read at its ends
        energy = json_forms.energy_dict(sampler, record.t_send_s, record.t_done_s, record.committed_tokens)
    if energy is not None:
        energy = own_part(energy, record, polls)
    if args.json:
        opts.print_json({**json_forms.request_dict(record), "energy": energy})
    else:
        table = render(record)
        for name, value in opts.energy_rows(energy):
            table.add_row(name, value)
        if energy and energy["own_share"] is not None and energy["own_share"] < 1:
            table.add_row(
                "split",
                f"{pct(energy['own_share'], 1)} of the device's energy: the server made "
                f"{num(energy['unseen_tokens'], ',.0f')} tokens for other requests meanwhile",
            )
        elif energy and energy["shared_with_other_requests"]:
            table.add_row("note", "other requests ran meanwhile: the energy is the whole device's")
        opts.console().print(table)
    return 0 if record.ok else 1


def own_part(energy: dict[str, Any], record: RequestRecord, polls: list[ServerSnapshot]) -> dict[str, Any]:
    """The energy block with the probe's own share where the server counted its tokens meanwhile.

    The meter sees the whole device: beside other requests the probe's share is its tokens over
    all the server made in its span (collectors/energy/unseen.py). Without the counts, a server
    busier than this one request says only that others shared it.
    """
    tokens = record.committed_tokens or 0
    share = unseen.own_share(activity(record), tokens, polls)
    out = {**energy, "device_energy_j": energy["energy_j"], "own_share": share, "unseen_tokens": None}
    if share is None:
        out["shared_with_other_requests"] = shared_with_unseen(record.concurrency_max, own_concurrency=1)
        return out
    out["unseen_tokens"] = round(tokens / share - tokens)
    out["shared_with_other_requests"] = share < 1
    out["energy_j"] = energy["energy_j"] * share
    if energy["mj_per_token"] is not None:
        out["mj_per_token"] = energy["mj_per_token"] * share
    return out


def render(record: RequestRecord) -> Table:
    lat = record.latency
    table = Table(
        title=f"one request to {escape(record.server_url)}{escape(record.route)}", show_header=False, box=None
    )
    table.add_column(style="bold")
    table.add_column()
    sizes = Counter(lat.burst_sizes[1:])
    inferred = "" if record.steps_exact else " (from stream bursts)"
    rows = [
        ("model", escape(record.model or "—")),
        (
            "tokens",
            f"{num(record.committed_tokens, 'd')} committed ({lat.events} events, "
            f"prompt {num(record.prompt_tokens, 'd')})",
        ),
        ("drafted / accepted", _drafted(record)),
        ("acceptance", pct(record.acceptance, 1)),
        ("verify steps", str(record.steps) + inferred),
        ("G (tokens per step)", num(record.mean_advance, ".2f") + inferred),
        ("verified width", num(record.verified_width, ".2f")),
        ("tok/s", f"{num(record.tok_s)} overall, {num(record.decode_tok_s)} after the first token"),
        ("TTFT", num(lat.ttft_ms, ".1f", " ms")),
        ("chunk gaps p50/p95/p99/max", _tail(lat.chunk_gaps)),
        ("step gaps p50/p95/p99/max", _tail(lat.step_gaps)),
        ("burst sizes", ", ".join(f"{size}×{n}" for size, n in sorted(sizes.items())) or "—"),
        (
            "server busy slots",
            f"mean {num(record.concurrency_mean, '.2f')}, max {num(record.concurrency_max, 'd')}",
        ),
        ("finish", escape(record.finish_reason or "—")),
    ]
    if record.error:
        rows.append(("error", escape(record.error)))
    if not record.tokens_per_event_exact:
        rows.append(("note", "this stream gave no token counts per event; gaps are per event"))
    if not record.steps_exact:
        rows.append(
            (
                "note",
                f"the server reported no step or draft counts ({registry.hints('no_request_counts_hint')}): "
                "steps and G come from stream bursts, which split and merge under load",
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    return table


def _drafted(record: RequestRecord) -> str:
    if not record.steps_exact:
        return "unknown (the server reported no counts)"
    return "nothing drafted" if record.draft_n is None else f"{record.draft_n} / {record.draft_n_accepted}"


def _tail(tail) -> str:
    values = (tail.p50_ms, tail.p95_ms, tail.p99_ms, tail.max_ms)
    return " / ".join(num(v, ".2f") for v in values) + (" ms" if tail.count else "")
