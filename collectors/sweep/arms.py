"""The two arms of a sweep: running servers, or commands spectop starts and stops itself.

A command's secrets (`--api-key …`) are for the server only: an arm is shown and saved with them
replaced (collectors/redact.py), and its argv, which has them, is left out of its repr.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess, url_from_argv
from collectors.launch.specflags import derive_plain_argv, has_speculative_flags
from collectors.redact import redact_argv, redact_command
from collectors.servers import check_url, registry


@dataclass(frozen=True, slots=True)
class ArmSpec:
    """One arm: a URL to a running server, or an argv spectop launches (never through a shell)."""

    name: str  # "plain" or "draft"
    url: str
    argv: tuple[str, ...] = field(default=(), repr=False)
    derived: bool = False  # plain argv made from the draft argv by dropping speculative flags
    dropped: tuple[str, ...] = ()  # what was dropped to derive it

    @property
    def launched(self) -> bool:
        return bool(self.argv)

    @property
    def option(self) -> str:
        """How the user gives this arm a running server's URL (`spectop sweep`'s option)."""
        return f"--{self.name}" if self.name in ("plain", "draft") else f"--arm {self.name}=URL"

    def check_program(self) -> None:
        """A launched arm's program exists (on PATH, where its dialect knows it is, or at its path):
        found before a sweep measures anything, not when the arm's first point comes."""
        program = self.argv[0]
        if shutil.which(program) is None and registry.locate_program(program) is None:
            raise SpectopError(
                f"the {self.name} arm's program {program!r} was not found (not on PATH, or not executable)",
                "install it, or give its full path in the arm's command",
            )

    @property
    def command(self) -> str:
        """The command as people and files see it: its secrets replaced."""
        return redact_command(self.argv) if self.argv else f"(running at {redact_command(self.url)})"

    def saved(self) -> dict[str, Any]:
        """The arm as a run's files keep it: every field, the argv's secrets replaced."""
        return {**asdict(self), "argv": redact_argv(self.argv)}


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command line as an argv list; quoting is honoured, nothing is ever run by a shell."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise SpectopError(
            "empty server command",
            f"e.g. --draft-cmd '{registry.example_draft_command()}'",
        )
    return argv


def make_arms(
    plain_url: str | None = None,
    draft_url: str | None = None,
    plain_cmd: str | Sequence[str] | None = None,
    draft_cmd: str | Sequence[str] | None = None,
) -> tuple[ArmSpec, ArmSpec]:
    """Both arms from what the user gave; the plain command is derived from the draft one if absent."""
    if draft_url and draft_cmd:
        raise SpectopError("give the draft arm as --draft URL or --draft-cmd, not both")
    if plain_url and plain_cmd:
        raise SpectopError("give the plain arm as --plain URL or --plain-cmd, not both")
    if draft_cmd:
        argv = split_command(draft_cmd)
        if not has_speculative_flags(argv):
            raise SpectopError(
                "the draft command has no speculative flags",
                "add e.g. -md draft.gguf --spec-type draft-simple",
            )
        draft = ArmSpec("draft", url_from_argv(argv), tuple(argv))
    elif draft_url:
        draft = ArmSpec("draft", check_url(draft_url))
    else:
        raise SpectopError("the sweep needs a draft arm", "pass --draft URL or --draft-cmd COMMAND")
    if plain_cmd:
        argv = split_command(plain_cmd)
        plain = ArmSpec("plain", url_from_argv(argv), tuple(argv))
    elif plain_url:
        plain = ArmSpec("plain", check_url(plain_url))
    elif draft.launched:
        argv, dropped = derive_plain_argv(draft.argv)
        plain = ArmSpec("plain", url_from_argv(argv), tuple(argv), derived=True, dropped=tuple(dropped))
    else:
        raise SpectopError(
            "the sweep needs a plain arm", "pass --plain URL, --plain-cmd, or --draft-cmd to derive it"
        )
    return plain, draft


class ArmPool:
    """Gives each point a ready server. Launched arms run one at a time, to leave memory for the other."""

    def __init__(self, arms: Sequence[ArmSpec], log_dir: Path, startup_timeout_s: float = 300.0) -> None:
        self.arms = {arm.name: arm for arm in arms}
        self.log_dir = log_dir
        self.startup_timeout_s = startup_timeout_s
        self._running: dict[str, ServerProcess] = {}
        self.starts = 0

    def ready(self, name: str, fresh: bool = False) -> str:
        """The URL of arm `name`, started (or restarted when `fresh`) if spectop launches it."""
        arm = self.arms[name]
        if not arm.launched:
            return arm.url
        current = self._running.get(name)
        if current is not None and current.running and not fresh:
            return arm.url
        self.stop_all()
        self.starts += 1
        log_path = self.log_dir / f"{name}-server-{self.starts}.log"
        process = ServerProcess(
            list(arm.argv),
            url=arm.url,
            log_path=log_path,
            startup_timeout_s=self.startup_timeout_s,
            name=f"{name} server",
        )
        process.start()
        self._running[name] = process
        return arm.url

    def stop_all(self) -> None:
        for process in self._running.values():
            process.stop()
        self._running.clear()
