"""Child processes a test starts are always reaped, whatever the test does or fails on."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from typing import TypeVar

P = TypeVar("P", bound=subprocess.Popen)


@contextlib.contextmanager
def reaped(proc: P, grace_s: float = 10.0) -> Iterator[P]:
    """Yield `proc`; on the way out, kill it if it still runs and wait for it, so no test leaves a
    child behind (nor a zombie, nor open pipes) when an assertion fails or a communicate times out."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=grace_s)
