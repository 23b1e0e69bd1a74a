"""spectop's commands, one module each, and the `Command` protocol every such module satisfies.

tui/cli.py lists the modules in a tuple typed `tuple[Command, ...]`, so mypy checks each module's
NAME, HELP, register and run against the protocol; a test checks that no module is left off that list.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Protocol

# argparse's type for what add_subparsers returns is private; the alias keeps that in one place
if TYPE_CHECKING:
    from typing import TypeAlias

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = argparse._SubParsersAction  # not subscriptable at run time


class Command(Protocol):
    """What a module in tui/commands provides."""

    NAME: str  # the word typed after `spectop`
    HELP: str  # one line for `spectop --help`

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        """Add this command's parser (named NAME, with its options) and return it."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Do the command; return the exit code. SpectopError becomes one line and exit code 2."""
        ...
