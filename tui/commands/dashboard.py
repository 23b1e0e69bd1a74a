"""`spectop dashboard`, which `spectop` with no command (or with only these options) also runs.

Builds settings, collector and meter, then runs the app. Textual is imported only here, when the
dashboard starts, so the headless commands never load it. Several servers (`--server` repeated, or
`--config FILE`) get a summary table; their meters are read by `spectop export`'s rule (one
`--meter` for all, shared, or one per server), each distinct meter opened once.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from collectors import heap
from collectors.errors import SpectopError
from collectors.launch import lifetime as server_lifetime
from collectors.meters import sampling
from collectors.redact import secrets_in
from collectors.requests.listen import check_port
from collectors.servers import check_url, registry
from collectors.servers.auto import AutoCollector
from tui.commands import _common as opts
from tui.commands import _report_ledger, _tune_live
from tui.commands._route_options import add_route_option, route_plan
from tui.config import ServerSpec, Settings, at_most, read_fleet, short_name, unique

if TYPE_CHECKING:
    from collectors.ledgerdb.store import EnergyStore
    from collectors.tune.schedule import DraftSchedule

NAME = "dashboard"
HELP = "watch a server and a meter live, run sweeps (the default command)"
DESCRIPTION = (
    "Watch a server and a power meter live, and run paired sweeps from the dashboard. "
    "`spectop` with no command, or with only these options, runs it."
)


EXIT_GRACE_S = 2.0  # after SIGTERM/SIGHUP, how long the app gets to end before the process does


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "servers", "meters")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a TOML file of servers to watch: [[server]] tables with name, url and meter",
    )
    opts.add_options(parser, "server-log", "proxy")
    add_route_option(parser)
    opts.add_options(parser, "record")
    opts.add_arm_options(parser, "sweep arms (prefill the sweep dialog)")
    opts.add_options(parser, "interval", "results", "api-key")
    _report_ledger.add_keep_options(parser)
    _tune_live.add_schedule_option(parser)


def settings_from(args: argparse.Namespace) -> Settings:
    if args.interval <= 0:
        raise SpectopError(f"--interval must be positive, not {args.interval}", "e.g. --interval 1")
    return Settings(
        server_url=check_url(args.server[0]),
        interval_s=args.interval,
        api_key=opts.api_key(args),
        plain_url=args.plain,
        plain_cmd=args.plain_cmd,
        draft_url=args.draft,
        draft_cmd=args.draft_cmd,
        results_root=args.results,
        server_log=args.server_log,
        proxy=args.proxy,
    )


def servers_from(args: argparse.Namespace) -> list[ServerSpec]:
    """The servers to watch: --config's, else each --server with its --meter (shared or paired)."""
    if args.config is not None:
        if args.server != [opts.DEFAULT_SERVER] or args.meter != ["auto"]:
            raise SpectopError(
                "--config lists the servers and meters, and --server or --meter is given too",
                "give the servers in the config file, or with --server and --meter",
            )
        return read_fleet(args.config)
    urls = [check_url(url) for url in args.server]
    meters = opts.meters_for(urls, args.meter)
    each = meters * len(urls) if len(meters) == 1 else meters
    return at_most(unique([ServerSpec(short_name(url), url, meter) for url, meter in zip(urls, each)]))


def take_stdin_pipe() -> int:
    """The pipe on stdin moved to a descriptor of its own, stdin the terminal again (Textual reads keys there)."""
    if os.isatty(0):
        raise SpectopError(
            "--server-log - reads a pipe, but standard input is the terminal",
            f"pipe the server's log in: {registry.default_program()} ... 2>&1 | spectop --server-log -",
        )
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError as exc:
        raise SpectopError(
            "--server-log - needs a terminal for the dashboard besides the pipe",
            "give the log file's path instead",
        ) from exc
    pipe_fd = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    return pipe_fd


def recording_secrets(settings: Settings) -> list[str]:
    """What a recording must never hold: the API key, and any secret inside a sweep arm's command."""
    words: list[str] = []
    for command in (settings.plain_cmd, settings.draft_cmd):
        try:
            words += shlex.split(command or "")
        except ValueError:  # unbalanced quotes: the sweep says so; its words still count
            words += (command or "").split()
    return [s for s in [settings.api_key, *secrets_in(words)] if s]


def run_dashboard(
    settings: Settings,
    meter_spec: str,
    on_sweep: Callable[[bool], None] | None = None,
    record: Path | None = None,
    on_idle: Callable[[float], None] | None = None,
    ledger: EnergyStore | None = None,
    schedule: DraftSchedule | None = None,
) -> int:
    from tui.app import SpectopApp  # Textual loads only for the dashboard

    collector = AutoCollector(settings.server_url, api_key=settings.api_key)
    with sampling(meter_spec, watching=True) as sampler:
        recorder = None
        if record is not None:
            from collectors.recording.writer import Recorder  # only when recording

            recorder = Recorder(
                record,
                server_url=settings.server_url,
                meter=sampler.meter.info if sampler else None,
                title=settings.title,
                secrets=recording_secrets(settings),
            )
        fleet: list = []
        if settings.route is not None:  # the routing proxy's two servers, on this one meter
            from tui.routing import routed_servers

            fleet = routed_servers(settings, sampler)
        app = SpectopApp(
            settings, collector, sampler, on_sweep=on_sweep, recorder=recorder, on_idle=on_idle, fleet=fleet
        )
        _tune_live.attach(app.fleet.servers, schedule)
        try:
            with _report_ledger.kept(ledger, app.fleet.servers):
                return run_app(app)
        finally:
            if recorder is not None:
                recorder.close()


def run_fleet(
    settings: Settings,
    servers: Sequence[ServerSpec],
    ledger: EnergyStore | None = None,
    schedule: DraftSchedule | None = None,
) -> int:
    """The dashboard of several servers: one sampler per distinct meter, shared by the servers naming it."""
    from tui.app import SpectopApp
    from tui.fleet import WatchedServer

    with ExitStack() as stack:
        opened = {
            spec: stack.enter_context(sampling(spec, watching=True))
            for spec in dict.fromkeys(s.meter for s in servers)
        }
        fleet = [
            WatchedServer.of(
                s.url,
                AutoCollector(s.url, api_key=settings.api_key),
                opened[s.meter],
                settings.energy_window_s,
                name=s.name,
            )
            for s in servers
        ]
        app = SpectopApp(settings, None, None, fleet=fleet)
        _tune_live.attach(app.fleet.servers, schedule)
        with _report_ledger.kept(ledger, app.fleet.servers):
            return run_app(app)


def run_app(app) -> int:
    """Run the app until it ends, or until SIGTERM or SIGHUP end it."""

    def leave(signum: int) -> None:
        # The sweep's servers are stopped already. End the app; and the process, should the app
        # not end (Textual hangs writing to a terminal that has gone away).
        watchdog = threading.Timer(EXIT_GRACE_S, os._exit, (128 + signum,))
        watchdog.daemon = True
        watchdog.start()
        try:
            app.call_from_thread(app.exit, return_code=128 + signum)
        except RuntimeError:  # the app had ended on its own
            pass

    # SIGTERM, or SIGHUP from a closed terminal, stop the servers a sweep started (on the
    # sweep's worker thread, where no handler can be installed) and end the app cleanly
    settling = heap.settle_later()  # startup's objects are not walked by the collector again
    with server_lifetime.on_terminate(leave):
        app.run()
    settling.cancel()
    return app.return_code or 0


def run(args: argparse.Namespace) -> int:
    route = route_plan(args)
    if route is not None:
        settings = dataclasses.replace(settings_from(args), server_url=route.draft_url, route=route)
        check_port(args.proxy)  # given: route_plan refuses routing without it
        return run_dashboard(
            settings, args.meter[0], record=args.record, ledger=_report_ledger.open_store(args)
        )
    servers = servers_from(args)
    settings = settings_from(args)
    schedule = _tune_live.schedule_of(args)
    if len(servers) > 1:
        if settings.server_log:
            raise SpectopError(
                "--server-log follows one server's log", "watch one --server with --server-log"
            )
        if settings.proxy:
            raise SpectopError("--proxy forwards to one server", "watch one --server with --proxy")
        if args.record:
            raise SpectopError("--record records one server", "watch one --server with --record")
        return run_fleet(
            dataclasses.replace(settings, server_url=servers[0].url),
            servers,
            _report_ledger.open_store(args),
            schedule,
        )
    settings = dataclasses.replace(settings, server_url=servers[0].url)
    if settings.server_log == "-":
        settings = dataclasses.replace(settings, server_log_fd=take_stdin_pipe())
    elif settings.server_log and os.path.isdir(settings.server_log):
        raise SpectopError(f"--server-log {settings.server_log} is a directory", "give the server's log file")
    if settings.proxy:
        check_port(settings.proxy)  # said on the command line, not in the dashboard
    return run_dashboard(
        settings,
        servers[0].meter,
        record=args.record,
        ledger=_report_ledger.open_store(args),
        schedule=schedule,
    )
