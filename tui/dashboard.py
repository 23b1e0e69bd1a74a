"""`spectop` with no command: the dashboard. Builds settings, collector and meter, then runs the app."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from collectors.errors import SpectopError
from collectors.meters import METER_SPEC_HELP, sampling
from collectors.servers import check_url
from collectors.servers.auto import AutoCollector
from tui.config import Settings

DEFAULT_SERVER = "http://127.0.0.1:8080"


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("dashboard (spectop with no command)")
    group.add_argument(
        "--server", default=DEFAULT_SERVER, metavar="URL", help=f"server to watch (default {DEFAULT_SERVER})"
    )
    group.add_argument("--meter", default="auto", metavar="SPEC", help=METER_SPEC_HELP)
    group.add_argument("--plain", metavar="URL", help="sweep: plain arm, a running server")
    group.add_argument("--plain-cmd", metavar="CMD", help="sweep: command that starts the plain server")
    group.add_argument("--draft", metavar="URL", help="sweep: draft arm, a running server")
    group.add_argument("--draft-cmd", metavar="CMD", help="sweep: command that starts the drafting server")
    group.add_argument(
        "--interval", type=float, default=1.0, metavar="S", help="seconds between polls (default 1)"
    )
    group.add_argument(
        "--results", type=Path, default=Path("results"), metavar="DIR", help="where sweeps are saved"
    )
    group.add_argument("--api-key", default=None, metavar="KEY", help="API key (default $SPECTOP_API_KEY)")


def settings_from(args: argparse.Namespace, **overrides: object) -> Settings:
    if args.interval <= 0:
        raise SpectopError(f"--interval must be positive, not {args.interval}", "e.g. --interval 1")
    base = Settings(
        server_url=check_url(args.server),
        interval_s=args.interval,
        api_key=args.api_key or os.environ.get("SPECTOP_API_KEY") or None,
        plain_url=args.plain,
        plain_cmd=args.plain_cmd,
        draft_url=args.draft,
        draft_cmd=args.draft_cmd,
        results_root=args.results,
    )
    return replace(base, **overrides) if overrides else base


def run_dashboard(settings: Settings, meter_spec: str, on_sweep: Callable[[bool], None] | None = None) -> int:
    from tui.app import SpectopApp  # Textual loads only for the dashboard

    collector = AutoCollector(settings.server_url, api_key=settings.api_key)
    with sampling(meter_spec) as sampler:
        SpectopApp(settings, collector, sampler, on_sweep=on_sweep).run()
    return 0


def run(args: argparse.Namespace) -> int:
    return run_dashboard(settings_from(args), args.meter)
