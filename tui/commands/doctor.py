"""`spectop doctor`: which power meters and server this machine can use, and how to fix the rest."""

from __future__ import annotations

import argparse

from collectors.meters import METER_SPEC_HELP
from collectors.meters.doctor import format_report, run_doctor
from tui.commands._common import print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="list the power meters (and server) spectop can use here, and how to fix the rest",
        description="Try every power meter (or the one --meter names) and, with --server, the server; "
        "say what each found, or why it failed and how to fix it. Exit 0 when a meter works "
        "(and the server answers, when asked about).",
    )
    parser.add_argument("--meter", default="auto", metavar="SPEC", help=METER_SPEC_HELP)
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="also detect this server (llama-server, vLLM, SGLang) and check its health and load endpoints",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report = run_doctor(args.meter, args.server)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))  # plain print: server text must not be read as markup
    return 0 if report.ok else 1
