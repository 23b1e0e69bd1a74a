"""Errors that carry a fix, so every front end can print one clear line instead of a traceback."""

from __future__ import annotations


class SpectopError(Exception):
    """An expected failure: `what` went wrong, `fix` says what the user can do about it."""

    def __init__(self, what: str, fix: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.what} ({self.fix})" if self.fix else self.what


class ServerUnreachable(SpectopError):
    """The server URL did not answer, or answered with something that is not an LLM server."""


class MeterUnavailable(SpectopError):
    """A power meter cannot be opened on this machine; `fix` names how to make it work."""
