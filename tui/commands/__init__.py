"""spectop's commands, one module each, and the `Command` protocol every such module satisfies.

`MODULES` names each command's module by the word typed, and `load` imports one: a command's
imports (the simulator, the sweep, the exporter) load only when it runs, so the dashboard's first
frame does not wait on them. tui/cli.py lists the modules for mypy in a tuple typed
`tuple[Command, ...]`, so it checks each module's NAME, HELP, DESCRIPTION, add_options and run
against the protocol; a test checks that no module is left off `MODULES`.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Protocol, cast

# the word typed after `spectop` -> its module here
MODULES = {
    "dashboard": "dashboard",
    "demo": "demo",
    "deploy": "deploy",
    "doctor": "doctor",
    "export": "export",
    "help": "help_topics",
    "probe": "probe",
    "replay": "replay",
    "report": "report",
    "snapshot": "snapshot",
    "sweep": "sweep",
    "tune": "tune",
    "watch": "watch",
}


def load(name: str) -> Command:
    """The module of the command typed as `name`, imported now."""
    return cast("Command", importlib.import_module(f"{__name__}.{MODULES[name]}"))


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
