"""What a dialect makes of a drafting schedule: the setting in its engine's own form for a release.

`DialectSchedule.render_schedule` is each dialect's (collectors/servers/<name>/schedule.py); the
default knows no form. A `ScheduleForm` is what a user pastes (`flags`, one command-line word
each), the files those flags name (`files`: a config the engine reads), what the engine cannot
express of the schedule, said plainly (`cannot`), and, where the release cannot apply it at all,
why (`refused`, with nothing to paste). `k_by_batch` is the K the engine will run at each batch
level of the schedule under this form, which can differ from the schedule's own where it cannot
express it exactly.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from collectors.tune.schedule import DraftSchedule


@dataclass(frozen=True, slots=True)
class ScheduleForm:
    engine: str  # the engine as people call it
    version: str | None  # the release the form is written for; None: not known
    flags: tuple[str, ...] = ()  # command-line words to add to the drafting server's command
    files: Mapping[str, str] = field(default_factory=dict)  # file name -> text the flags point to
    cannot: tuple[str, ...] = ()  # what of the schedule this engine cannot express
    notes: tuple[str, ...] = ()  # where the form comes from and what else the release does with it
    refused: str | None = None  # why this release cannot apply a schedule at all
    apply_with: str | None = None  # a command that applies the schedule outside the engine
    k_by_batch: Mapping[int, int] = field(default_factory=dict)  # what the engine will run per level

    @property
    def paste(self) -> str:
        """The flags as one shell line."""
        return shlex.join(self.flags)


class DialectSchedule:
    """A dialect's drafting-schedule form; the default has none."""

    engine_names: ClassVar[tuple[str, ...]] = ()  # what `spectop tune --engine` accepts for it

    @classmethod
    def render_schedule(cls, schedule: DraftSchedule, version: str | None) -> ScheduleForm | None:
        return None

    @classmethod
    def draft_tokens_in(cls, argv: Sequence[str]) -> int | None:
        """The most tokens a server started with `argv` drafts per step, where its command says."""
        return None


def flag_value(argv: Sequence[str], names: frozenset[str]) -> str | None:
    """The last value given to any of `names` (`--flag value` or `--flag=value`)."""
    found = None
    for i, word in enumerate(argv):
        name, eq, value = word.partition("=")
        if name in names:
            found = value if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return found


def whole(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None
