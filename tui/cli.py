"""The `spectop` command: one subcommand per module in tui/commands; the dashboard is the default.

Pitfalls handled: argparse reads options typed before a subcommand into the top-level namespace,
where the subcommand's defaults then overwrite them (`spectop --meter none probe` probed with the
auto meter). So the top level has no options of its own besides --help and --version: leading
options with no command after them are the dashboard's (`spectop --server URL`, as the README
shows), and leading options followed by a command stop with one line that gives the command to type
instead, any API key in it masked. argparse quotes the command line in its errors ("unrecognized
arguments: --api-key S"), and an error may quote a server: neither shows a secret from the command
line (collectors/redact.py) or a raw control character (`fmt.printable`).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.redact import redact_argv, scrub, secrets_in
from tui.commands import MODULES, dashboard, load

if TYPE_CHECKING:  # typed, so mypy checks every module against Command; never imported to run
    from tui.commands import (
        Command,
        demo,
        deploy,
        doctor,
        export,
        help_topics,
        probe,
        replay,
        report,
        snapshot,
        sweep,
        tune,
        watch,
    )

    CHECKED: tuple[Command, ...] = (
        dashboard,
        demo,
        deploy,
        doctor,
        export,
        help_topics,
        probe,
        replay,
        report,
        snapshot,
        sweep,
        tune,
        watch,
    )
DEFAULT = dashboard
TOP_LEVEL_FLAGS = ("--help", "--version")  # -h too; argparse also takes unique prefixes of these
SECRET_OPTIONS = ("--api-key",)  # spectop's own, which argparse also reads abbreviated (--api)


def without_secrets(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` (quoting a command line) with the values of secret options and `secrets` replaced."""
    return scrub(" ".join(redact_argv(text.split(" "), abbreviations=SECRET_OPTIONS)), secrets)


def build_parser(secrets: Sequence[str] = (), only: str | None = None) -> argparse.ArgumentParser:
    """The parser; its errors (and its subcommands') never show `secrets`, the command line's. With
    `only` (a command's name), that command's alone: the others' modules are not imported."""

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            super().error(without_secrets(message, secrets))

    parser = Parser(
        prog="spectop",
        description="Live energy monitoring of LLM servers that use speculative decoding. "
        f"With no command, or with only {DEFAULT.NAME} options (spectop --server URL), "
        f"spectop runs `spectop {DEFAULT.NAME}`.",
        epilog="Options go after the command: spectop probe --server URL. "
        "Each command's options: spectop COMMAND --help.",
    )
    parser.add_argument("--version", action="version", version="spectop 0.1.0")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in MODULES if only is None else (only,):
        command = load(name)
        command_parser = subparsers.add_parser(
            command.NAME, help=command.HELP, description=command.DESCRIPTION
        )
        command.add_options(command_parser)
        command_parser.set_defaults(run=command.run, command_parser=command_parser)
    return parser


def with_command(argv: Sequence[str]) -> list[str]:
    """`argv` with a command first: the default one when none was typed.

    Raises SpectopError when a command follows options, which argparse would otherwise drop."""
    args = list(argv)
    if not args:
        return [DEFAULT.NAME]
    first = args[0]
    if not first.startswith("-") or first == "-h" or _abbreviates(first, TOP_LEVEL_FLAGS):
        return args
    at = _command_index(args)
    if at is None:
        return [DEFAULT.NAME, *args]
    name = args[at]
    typed = [
        "spectop",
        name,
        *redact_argv(args[:at] + args[at + 1 :], placeholder="KEY", abbreviations=SECRET_OPTIONS),
    ]
    raise SpectopError(
        f"options before the command {name!r} are not read", f"put them after it: {shlex.join(typed)}"
    )


def _command_index(args: list[str]) -> int | None:
    """Where a command name stands in `args` once the default command's options are read, if anywhere."""
    names = set(MODULES)
    leading = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    DEFAULT.add_options(leading)
    # everything from the first word that is no option's value on, as argparse itself would read it
    leading.add_argument("rest", nargs=argparse.REMAINDER)
    try:
        rest = leading.parse_known_args(args)[0].rest
    except argparse.ArgumentError:  # a bad value: fall back to the first command-like word
        rest = args
    start = len(args) - len(rest)
    if args[start:] != rest:
        rest, start = args, 0
    return next((start + i for i, word in enumerate(rest) if word in names), None)


def _abbreviates(word: str, flags: Sequence[str]) -> bool:
    option = word.split("=", 1)[0]
    return len(option) > 2 and any(flag.startswith(option) for flag in flags)


def command_line_secrets(argv: Sequence[str]) -> list[str]:
    """The secrets a command line holds (API keys, also inside --draft-cmd), and $SPECTOP_API_KEY."""
    from_env = os.environ.get("SPECTOP_API_KEY")
    return secrets_in(argv, abbreviations=SECRET_OPTIONS) + ([from_env] if from_env else [])


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed command line, `run` set to the command's; SpectopError for a misplaced command or
    a bad value, never quoting a secret (an option's value may be a whole --draft-cmd with a key)."""
    secrets = command_line_secrets(argv)
    try:
        words = with_command(argv)
        only = words[0] if words[0] in MODULES else None  # else --help, or a misspelt command: all
        args, unknown = build_parser(secrets, only).parse_known_args(words)
    except SpectopError as exc:
        raise SpectopError(scrub(exc.what, secrets), scrub(exc.fix, secrets)) from None
    if unknown:  # said by the command's parser: its usage, not the top level's
        args.command_parser.error(
            f"unrecognized arguments: {' '.join(unknown)}{_did_you_mean(unknown, args)}"
        )
    for action in args.command_parser._actions:
        # argparse (before 3.12) reads `--window=--` as no value at all, an empty list its type never saw
        if action.nargs is None and action.type is not None and getattr(args, action.dest, None) == []:
            option = action.option_strings[-1]
            raise SpectopError(f"{option} needs a value, not '--'", f"e.g. {option} {action.default}")
    return args


def _did_you_mean(unknown: Sequence[str], args: argparse.Namespace) -> str:
    """`; did you mean --server?` for a misspelt option the command has."""
    options = [o for action in args.command_parser._actions for o in action.option_strings]
    typed = next((word.split("=", 1)[0] for word in unknown if word.startswith("--")), None)
    close = difflib.get_close_matches(typed, options, n=1) if typed else []
    return f"; did you mean {close[0]}?" if close else ""


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse(argv)
        return int(args.run(args) or 0)
    except SpectopError as exc:
        # an error may quote a server (an HTTP body, a launched server's log): never raw on the terminal
        shown = printable(scrub(str(exc), command_line_secrets(argv)), keep_newlines=True)
        print(f"spectop: {shown}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spectop: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a library's own error (anyio's ExceptionGroup, …): one line, not a traceback
        if os.environ.get("SPECTOP_DEBUG"):
            raise
        cause = _innermost(exc)
        what = scrub(f"{type(cause).__name__}: {cause}", command_line_secrets(argv))
        print(f"spectop: unexpected {printable(what)} ({UNEXPECTED_FIX})", file=sys.stderr)
        return 1


UNEXPECTED_FIX = "please report it; SPECTOP_DEBUG=1 shows the traceback"


def _innermost(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (asyncio's TaskGroup and anyio wrap what failed)."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup from 3.11, the backport before
    while isinstance(inner, (list, tuple)) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


if __name__ == "__main__":
    raise SystemExit(main())
