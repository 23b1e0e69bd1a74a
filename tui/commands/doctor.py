"""`spectop doctor`: which power meters and server this machine can use, and how to fix the rest."""

from __future__ import annotations

import argparse

from collectors.checkup import format_report, run_doctor
from tui.commands import _common as opts

NAME = "doctor"
HELP = "list the power meters (and server) spectop can use here, and how to fix the rest"
DESCRIPTION = (
    "Try every power meter (or the one --meter names) and, with --server, the server: which "
    "server and version answers, its health, load and /metrics endpoints; say what each found, "
    "or why it failed and how to fix it. Exit 0 when a meter works (and the server is healthy, "
    "when asked about; an optional endpoint it leaves off is skipped, not a failure)."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_options(parser, "meter")
    opts.add_server_option(parser, optional=True)
    opts.add_options(parser, "api-key", "json")


def run(args: argparse.Namespace) -> int:
    report = run_doctor(args.meter, args.server, api_key=opts.api_key(args))
    if args.json:
        opts.print_json(report.to_dict())
    else:
        print(format_report(report))  # plain print: server text must not be read as markup
    return 0 if report.ok else 1
