"""A program on a pseudo-terminal that is its controlling terminal, as a user runs it in a terminal
window: keys are written to the master side, what it draws is read from there, and closing the
master is what closing the window does (the kernel sends SIGHUP)."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _controlling_terminal() -> None:
    # in the child: a session of its own, with the pty as its controlling terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`argv` on a pseudo-terminal of `size` (columns, rows); `read` drains what it draws."""

    def __init__(self, argv: list[str], size: tuple[int, int] = (120, 40)) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=_controlling_terminal,
            cwd=ROOT,
            env={**os.environ, "TERM": "xterm-256color"},
        )
        os.close(slave)
        self.screen = b""

    def read(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.master >= 0:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:
                    return

    def until(self, text: bytes, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while text not in self.screen and time.monotonic() < end:
            self.read(0.1)
        assert text in self.screen, self.screen[-2000:]

    def keys(self, *keys: bytes) -> None:
        for key in keys:
            os.write(self.master, key)
            self.read(0.3)

    def close(self) -> None:
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
