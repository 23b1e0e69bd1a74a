"""`spectop` as a user runs it: a subprocess, its exit code and its streams, and the one-line rule."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def spectop(
    *args: str, timeout_s: float = 120, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout_s,
        preexec_fn=preexec,
        env={**os.environ, "COLUMNS": "160", "PYTHONUNBUFFERED": "1"},
    )


def spectop_popen(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "160", "PYTHONUNBUFFERED": "1"},
    )


def one_line(stderr: str) -> str:
    """The single line spectop wrote on stderr (asserting there is one, and no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def file_size_limit(limit_bytes: int) -> Callable[[], None]:
    """A preexec that caps every file the child writes at `limit_bytes`: a disk that fills up.

    Past the cap a write fails with EFBIG, as on a full disk with ENOSPC, leaving what fitted of it
    (SIGXFSZ, which would kill the child instead, is ignored).
    """

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return limit
