"""`spectop watch -- llama-server -m … [-md …]`: start a server, watch it and its log, stop it on exit.

Pitfalls handled: the server command is an argv list after `--`, never a shell line; a draft model
loaded without `--spec-type` (it is never used: collectors/launch/specflags.py) looks over HTTP exactly
like no draft, so the command goes to the dashboard, which shows the red VOID from its first paint
and says why in a notification (a line printed before the dashboard would be hidden by it); the
server's stdout and stderr go to a log file spectop keeps, which the dashboard follows like
`--server-log`; the server is stopped however the dashboard ends (collectors/launch/process.py), and a
server that fails to start ends with its log's last lines, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess
from collectors.redact import scrub, secrets_in
from collectors.requests.listen import check_port
from collectors.servers import registry
from tui.commands import _common as opts
from tui.commands import _report_ledger, dashboard
from tui.commands._route_options import ROUTE_EXAMPLE, add_route_option
from tui.config import Settings

NAME = "watch"
HELP = "start a server, watch it and every request in its log, stop it on exit"
DESCRIPTION = (
    "Start the server command given after --, follow its log (every request it serves: tokens, "
    "drafted, accepted, energy) and poll it in the dashboard; the server stops when spectop does. "
    "Example: spectop watch -- llama-server -m target.gguf -md draft.gguf --spec-type draft-simple"
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "meter", "interval", "results", "api-key", "proxy", "record")
    add_route_option(parser)  # refused here with the command that routes: watch starts one server
    _report_ledger.add_keep_options(parser)
    parser.add_argument("server_cmd", nargs=argparse.REMAINDER, metavar="-- CMD", help="the server command")


def server_argv(args: argparse.Namespace) -> list[str]:
    argv = list(args.server_cmd)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise SpectopError(
            "no server command to watch",
            f"put it after --: spectop watch -- {registry.default_program()} -m MODEL",
        )
    return argv


def start_server(argv: list[str], log_dir: Path | None = None) -> ServerProcess:
    """Start the server with its log in a file (health-waited)."""
    directory = log_dir or Path(tempfile.mkdtemp(prefix="spectop-watch-"))
    log_path = directory / "server.log"
    log_path.touch()  # followed from its end: created before the server writes
    server = ServerProcess(argv, log_path=log_path, name=Path(argv[0]).name)
    if server.located:
        print(f"spectop: {argv[0]} is not on PATH; starting {server.located}", file=sys.stderr, flush=True)
    return server.start()


def watch_settings(server: ServerProcess, args: argparse.Namespace) -> Settings:
    return Settings(
        server_url=server.url,
        interval_s=args.interval,
        api_key=opts.api_key(args),
        results_root=args.results,
        server_log=str(server.log_path),
        proxy=args.proxy,
        title=f"spectop watch {Path(server.argv[0]).name}",
        server_argv=tuple(server.argv),
    )


def run(args: argparse.Namespace) -> int:
    if args.route_by_batch is not None:
        raise SpectopError(
            "spectop watch starts one server, and --route-by-batch routes between two",
            f"start a plain and a drafting server, then: {ROUTE_EXAMPLE}",
        )
    argv = server_argv(args)
    if args.proxy:
        check_port(args.proxy)  # before the server starts: a taken port stops nothing half-started
    ledger = _report_ledger.open_store(args)  # so is a ledger that cannot be opened
    server = start_server(argv)
    try:
        print(f"spectop: {scrub(server.name, secrets_in(argv))} ready at {server.url}; log {server.log_path}")
        settings = watch_settings(server, args)
        return dashboard.run_dashboard(settings, args.meter, record=args.record, ledger=ledger)
    finally:
        server.stop()
