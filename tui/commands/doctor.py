"""`spectop doctor`: which power meters and server this machine can use, and how to fix the rest."""

from __future__ import annotations

import argparse

from collectors.meters.doctor import format_report, run_doctor
from tui.commands import Subparsers
from tui.commands._common import add_json_option, add_meter_option, add_server_option, print_json

NAME = "doctor"
HELP = "list the power meters (and server) spectop can use here, and how to fix the rest"


def register(subparsers: Subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        NAME,
        help=HELP,
        description="Try every power meter (or the one --meter names) and, with --server, the server; "
        "say what each found, or why it failed and how to fix it. Exit 0 when a meter works "
        "(and the server answers, when asked about).",
    )
    add_meter_option(parser)
    add_server_option(parser, optional=True)
    add_json_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    report = run_doctor(args.meter, args.server)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))  # plain print: server text must not be read as markup
    return 0 if report.ok else 1
