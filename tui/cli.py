"""The `spectop` command: the dashboard by default, and headless subcommands beside it."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from collectors.errors import SpectopError
from tui import commands, dashboard

# Every public module in tui/commands exposes `register(subparsers)`, which adds its parser and
# sets `run` as the parser's default; adding a command is adding a file.


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spectop",
        description="Live energy monitoring of LLM servers that use speculative decoding.",
    )
    parser.add_argument("--version", action="version", version="spectop 0.1.0")
    dashboard.add_options(parser)
    parser.set_defaults(run=dashboard.run)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"tui.commands.{info.name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except SpectopError as exc:
        print(f"spectop: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spectop: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
