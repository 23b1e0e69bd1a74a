"""spectop's commands, one module each, and the `Command` protocol every such module satisfies.

tui/cli.py lists the modules in a tuple typed `tuple[Command, ...]`, so mypy checks each module's
NAME, HELP, DESCRIPTION, add_options and run against the protocol, and builds every command's
parser the same way; a test checks that no module is left off that list.
"""

from __future__ import annotations

import argparse
from typing import Protocol


class Command(Protocol):
    """What a module in tui/commands provides."""

    NAME: str  # the word typed after `spectop`
    HELP: str  # one line for `spectop --help`

    @property
    def DESCRIPTION(self) -> str | None:  # a module constant; read-only, so `str` satisfies it
        """The paragraph atop `spectop NAME --help`."""
        ...

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """Add this command's options (shared ones through `_common.add_options`) to its parser."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Do the command; return the exit code. SpectopError becomes one line and exit code 2."""
        ...
