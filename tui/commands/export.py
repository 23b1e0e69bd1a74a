"""`spectop export`: serve spectop's derived figures on a Prometheus /metrics endpoint.

Several servers in one exporter: `--server` repeats; `--meter` once is one meter under all of them
(their energy split by tokens, labelled `energy="shared"`), or once per server, paired in order.
`--sweep DIR` reads each server's live mJ/token against that sweep's curves and serves its table.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from contextlib import ExitStack
from pathlib import Path

from prometheus_client.registry import CollectorRegistry

from collectors import heap
from collectors.errors import SpectopError
from collectors.export.exporter import SpectopExporter
from collectors.export.listener import start_listener
from collectors.meters import sampling
from collectors.servers import check_url
from collectors.servers.auto import AutoCollector
from collectors.sweep.textfile import SweepSeries, saved_summary
from tui.commands import _common as opts
from tui.commands import _report_ledger, _tune_live

NAME = "export"
HELP = "serve spectop's figures on a Prometheus /metrics endpoint"
DESCRIPTION = (
    "Poll a server and a meter and serve acceptance, G, width, tok/s, W and mJ/token "
    "(labelled with the meter's method) for Prometheus to scrape; several servers in one exporter."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "servers", "meters")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9464",
        metavar="HOST:PORT",
        help="where to serve /metrics (default 127.0.0.1:9464)",
    )
    opts.add_options(parser, "interval")
    parser.add_argument(
        "--window",
        type=opts.seconds("--window", 0.0, opts.MAX_SECONDS, 30.0, above_low=True),
        default=30.0,
        metavar="S",
        help="rolling mJ/token window (default 30)",
    )
    parser.add_argument(
        "--sweep",
        type=Path,
        metavar="DIR",
        help="a saved sweep: serve its table and read live mJ/token against its curves (the verdict)",
    )
    opts.add_options(parser, "api-key")
    _report_ledger.add_keep_options(parser)
    _tune_live.add_schedule_option(parser)


def parse_listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SpectopError(f"--listen must be HOST:PORT, not {text!r}", "e.g. --listen 0.0.0.0:9464")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    host, port = parse_listen(args.listen)
    urls = [check_url(url) for url in args.server]
    if len(set(urls)) < len(urls):
        raise SpectopError("the same --server is given twice", "name each server once")
    specs = opts.meters_for(urls, args.meter)
    summary = saved_summary(args.sweep) if args.sweep else None
    schedule = _tune_live.schedule_of(args)
    with ExitStack() as stack:
        # one sampler per distinct meter: servers named with the same meter share it (and its joules)
        opened = {spec: stack.enter_context(sampling(spec, watching=True)) for spec in dict.fromkeys(specs)}
        samplers = [opened[specs[i if len(specs) > 1 else 0]] for i in range(len(urls))]
        collectors = [AutoCollector(url, api_key=opts.api_key(args)) for url in urls]
        store = _report_ledger.open_store(args)
        if store is not None:
            stack.callback(store.close)
        exporter = SpectopExporter(collectors[0], samplers[0], args.window, summary, store)
        for collector, sampler in zip(collectors[1:], samplers[1:]):
            exporter.add_server(collector, sampler)
        if schedule is not None:
            exporter.attach_schedule(schedule)
        registry = CollectorRegistry()
        registry.register(exporter)
        if summary is not None:
            registry.register(SweepSeries(summary, args.sweep.name))
        try:
            start_listener(host, port, registry)
        except OSError as exc:
            raise SpectopError(
                f"cannot listen on {host}:{port} ({exc.strerror})", "pick another --listen"
            ) from exc
        kept = f"; energy ledger {store.path}" if store is not None else ""
        print(
            f"spectop export: serving http://{host}:{port}/metrics for {', '.join(urls)}{kept}; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )
        settling = heap.settle_later()  # startup's objects are not walked by the collector again
        asyncio.run(serve(exporter, args.interval))
        settling.cancel()
        print("spectop export: stopped", file=sys.stderr)
    return 0


async def serve(exporter: SpectopExporter, interval_s: float) -> None:
    """The poll loop until SIGINT or SIGTERM: each sets a flag the loop reads, so the poll in
    flight finishes and the meter and clients close in order (SpectopExporter.run says why a
    cancelled task is not enough)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await exporter.run(interval_s, stop.is_set, stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
