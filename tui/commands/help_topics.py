"""`spectop help TOPIC`: the long texts that would otherwise repeat in every command's --help.

Every command that measures energy takes `--meter SPEC`; the list of specs and what each reads is
fifteen lines of help, said once here (`spectop help meters`) and pointed to by each command's
one-line `--meter` help (tui/commands/_common.py). The rows come from the meter registry
(`describe_meters`, collectors/meters/specs.py), so a new meter is listed here as it is everywhere else.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap

from collectors.meters import describe_meters

NAME = "help"
HELP = "the long help texts: spectop help meters (every --meter SPEC and what it reads)"
DESCRIPTION = "Print a help text that several commands share. Topics: meters (every --meter SPEC)."
TOPICS = ("meters",)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", choices=TOPICS, help="what to explain: meters (the --meter specs)")


def meters_text(width: int) -> str:
    """Every meter spec and what it reads, the description wrapped beside its spec."""
    column = max(len(spec) for spec, _ in describe_meters()) + 4
    lines = [
        "--meter SPEC: where spectop reads power (default auto).",
        "",
    ]
    for spec, description in describe_meters():
        wrapped = textwrap.wrap(description, max(width - column - 2, 20)) or [""]
        lines.append(f"  {spec:<{column - 2}}{wrapped[0]}")
        lines += [" " * column + rest for rest in wrapped[1:]]
    lines += [
        "",
        *textwrap.wrap(
            "spectop (the dashboard) and spectop export take --meter once for all servers (shared: "
            "energy is split between them by tokens) or once per --server, in the same order. "
            "spectop doctor tries every meter on this machine and says how to fix the ones that fail.",
            width,
        ),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    width = min(shutil.get_terminal_size().columns, 100) - 1
    print(meters_text(width))
    return 0
