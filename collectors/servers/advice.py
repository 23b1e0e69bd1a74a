"""What a dialect tells the user about its server: the flags that ask it for speculative decoding
(so a plain arm is the drafting command without them), a draft that is loaded but never used,
the setting lines the sweep prints for an arm, a batch and a version, its hints, and the notes
under a snapshot.

`DialectAdvice`'s defaults know nothing: no flags beyond the ones spelled like speculative
ones (collectors/launch/specflags.py), no setting lines (the sweep prints an arm's own command for
a server whose dialect says nothing here), no hints and no notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from collectors.servers.snapshot import ServerSnapshot

# the values given to any of a set of flags in a command (`--flag value` or `--flag=value`)
FlagValues = Callable[[frozenset[str]], list[str]]


def requests_text(n: int) -> str:
    """`n` concurrent requests, in words."""
    return f"{n} concurrent request" + ("" if n == 1 else "s")


class DialectAdvice:
    """A dialect's speculative flags and setting lines; each line starts with the server's name."""

    spec_value_flags: ClassVar[frozenset[str]] = frozenset()  # speculative flags taking a value
    spec_switch_flags: ClassVar[frozenset[str]] = frozenset()  # speculative flags taking none
    spec_env_prefixes: ClassVar[tuple[str, ...]] = ()  # environment variables that set them
    # hints, each naming the server: how a draft that drafts nothing is fixed there, how to get
    # drafted counts (per request or on a page), and how to get them per request
    void_draft_hint: ClassVar[str | None] = None
    no_counts_hint: ClassVar[str | None] = None
    no_request_counts_hint: ClassVar[str | None] = None
    drafting_unknown_reason: ClassVar[str] = "the server does not say"  # when a snapshot cannot tell
    program: ClassVar[str | None] = None  # the server's program, as a command line starts
    example_draft_command: ClassVar[str | None] = None  # a drafting command line, for examples

    @classmethod
    def locate_program(cls) -> str | None:
        """Where `program` is when PATH does not have it (a binary a Python package carries)."""
        return None

    @classmethod
    def snapshot_notes(cls, snap: ServerSnapshot) -> list[str]:
        """Why a figure of this server's snapshot is unknown or approximate, in its own terms."""
        return []

    @classmethod
    def loads_unused_draft(cls, argv: Sequence[str], values: FlagValues, env: Mapping[str, str]) -> bool:
        """The command loads a draft model this server will never use."""
        return False

    @classmethod
    def plain_setting(cls, at: str) -> str | None:
        """The line that runs the server without drafting, `at` a batch ("at 4 concurrent requests")."""
        return None

    @classmethod
    def draft_setting(cls, n: int, at: str) -> str | None:
        """The line that drafts `n` tokens per step."""
        return None

    @classmethod
    def ngram_setting(cls, at: str) -> str | None:
        """The line that drafts by n-gram copying from the prompt."""
        return None

    @classmethod
    def off_above(cls, batch: int, build: str | None, draft_tokens: int | None) -> str | None:
        """The line that keeps drafting up to `batch` requests and stops it beyond, for this
        `build` (the server's version) and draft length."""
        return None
