"""`spectop export`: serve spectop's derived figures on a Prometheus /metrics endpoint."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from prometheus_client import start_http_server
from prometheus_client.registry import CollectorRegistry

from collectors.errors import SpectopError
from collectors.exporter import SpectopExporter
from collectors.meters import sampling
from collectors.servers import check_url
from collectors.servers.auto import AutoCollector
from tui.commands import _common as opts

NAME = "export"
HELP = "serve spectop's figures on a Prometheus /metrics endpoint"
DESCRIPTION = (
    "Poll a server and a meter and serve acceptance, G, width, tok/s, W and mJ/token "
    "(labelled with the meter's method) for Prometheus to scrape."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "server", "meter")
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
    opts.add_options(parser, "api-key")


def parse_listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SpectopError(f"--listen must be HOST:PORT, not {text!r}", "e.g. --listen 0.0.0.0:9464")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    host, port = parse_listen(args.listen)
    url = check_url(args.server)
    with sampling(args.meter) as sampler:
        exporter = SpectopExporter(AutoCollector(url, api_key=opts.api_key(args)), sampler, args.window)
        registry = CollectorRegistry()
        registry.register(exporter)
        try:
            start_http_server(port, addr=host, registry=registry)
        except OSError as exc:
            raise SpectopError(
                f"cannot listen on {host}:{port} ({exc.strerror})", "pick another --listen"
            ) from exc
        print(
            f"spectop export: serving http://{host}:{port}/metrics for {url}; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )
        asyncio.run(serve(exporter, args.interval))
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
        await exporter.run(interval_s, stop.is_set)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
