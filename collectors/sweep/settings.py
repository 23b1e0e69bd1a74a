"""The sweep's recommendation as the exact setting to apply, per engine: a line a user copies.

Each line is the arm's server's own (collectors/servers/<name>/advice.py): a draft length,
n-gram copying, no drafting, or drafting only up to a batch for the server's version.

Pitfalls handled: an arm whose name does not say what it drafts (a user's `--arm fast=URL`) gets
its own command back, not a guessed flag; an engine spectop does not know gets the arm's name and
command, never another engine's flags.
"""

from __future__ import annotations

from collectors.servers import registry
from collectors.servers.advice import requests_text


def draft_length(arm: str) -> int | None:
    """The draft length an arm's name says (`draft-4`: 4); None for any other name."""
    head, _, tail = arm.rpartition("-")
    return int(tail) if head == "draft" and tail.isdigit() else None


def setting_lines(arm: str, backend: str | None, command: str | None, batch: int) -> list[str]:
    """What to run for arm `arm` to be the setting at `batch` requests, on the arm's engine."""
    at = f"at {requests_text(batch)}"
    dialect = registry.find(backend) if backend is not None else None
    n = draft_length(arm)
    line = None
    if dialect is not None and arm == "plain":
        line = dialect.plain_setting(at)
    elif dialect is not None and n is not None:
        line = dialect.draft_setting(n, at)
    elif dialect is not None and arm == "ngram":
        line = dialect.ngram_setting(at)
    return [line or f"{at}: run the {arm} arm as measured" + (f": {command}" if command else "")]


def off_above(
    backend: str | None, batch: int, build: str | None = None, draft_tokens: int | None = None
) -> str:
    """Drafting pays up to `batch` requests and costs beyond: the setting that stops it there.

    `build` is the server's reported version (settings differ between versions) and
    `draft_tokens` the draft length to keep below the batch, where the arm says one. An engine
    whose dialect says nothing gets the default server's line.
    """
    for dialect in (registry.find(backend) if backend is not None else None, registry.find(None)):
        line = dialect.off_above(batch, build, draft_tokens) if dialect is not None else None
        if line:
            return line
    return f"run without a draft above {requests_text(batch)}"
