"""Follow a growing log like `tail -F`: a file path, or `-` for a pipe on standard input.

Pitfalls handled: a rotated file (renamed or deleted, a new one made under the name) is read to
its end and then the new file from its start; a truncated file (`> log`, copytruncate) is read
again from its start; a file not there yet, or gone for a while, is waited for; a line written in
two parts is returned once, whole; bytes that are not UTF-8 are replaced, never raised. A pipe is
read with a timeout (`select`), so a follower waiting on a quiet server still returns to its
caller, which can stop it. `poll` never blocks longer than `timeout_s`.
"""

from __future__ import annotations

import os
import select
import sys
from typing import BinaryIO

from collectors.errors import SpectopError

READ_CHUNK = 65536
STDIN = "-"


class LogFollower:
    """New complete lines of `path` (or of standard input for `-`), on each `poll`.

    A file is followed from its end (the requests already in it ran before spectop watched, on
    a clock spectop cannot place), unless `from_start`; a pipe from its first byte.
    """

    def __init__(self, path: str, *, from_start: bool = False, stdin_fd: int | None = None) -> None:
        self.path = path
        self._partial = b""
        self._file: BinaryIO | None = None
        self._inode: tuple[int, int] | None = None
        self._fd: int | None = None
        self.ended = False  # a pipe's writer closed it
        if path == STDIN:
            self._fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
        elif os.path.isdir(path):
            raise SpectopError(
                f"--server-log {path} is a directory", "give the server's log file, or - for a pipe"
            )
        else:
            self._open(seek_end=not from_start)

    def _open(self, *, seek_end: bool) -> None:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - kept open across polls
        except FileNotFoundError:
            return  # not written yet: waited for
        except OSError as exc:
            raise SpectopError(
                f"cannot read --server-log {self.path}: {exc.strerror or exc}",
                "check the path and its permissions",
            ) from exc
        if self._file is not None:
            self._file.close()
        self._file = handle
        stat = os.fstat(handle.fileno())
        self._inode = (stat.st_dev, stat.st_ino)
        if seek_end:
            handle.seek(0, os.SEEK_END)

    def poll(self, timeout_s: float = 0.0) -> list[str]:
        """The lines completed since the last poll (without their newlines)."""
        data = self._read_pipe(timeout_s) if self._fd is not None else self._read_file()
        if not data:
            return []
        data, self._partial = self._partial + data, b""
        *lines, rest = data.split(b"\n")
        self._partial = rest
        return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]

    def _read_pipe(self, timeout_s: float) -> bytes:
        assert self._fd is not None
        if self.ended:
            return b""
        ready, _, _ = select.select([self._fd], [], [], timeout_s)
        if not ready:
            return b""
        data = os.read(self._fd, READ_CHUNK)
        if not data:  # the writer closed the pipe: what was left is the last line
            self.ended = True
            return b"\n" if self._partial else b""
        return data

    def _read_file(self) -> bytes:
        if self._file is None:
            self._open(seek_end=False)  # it appeared: all of it is new
            if self._file is None:
                return b""
        data = self._file.read()
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return data  # moved away: keep reading the old one until a new one appears
        if (stat.st_dev, stat.st_ino) != self._inode:  # rotated: the old file's rest, then the new one
            whole, _, _cut = (self._partial + data).rpartition(b"\n")  # a cut last line is dropped
            self._partial = b""
            self._open(seek_end=False)
            assert self._file is not None
            return (whole + b"\n" if whole else b"") + self._file.read()
        if stat.st_size < self._file.tell():  # truncated in place: start again
            self._file.seek(0)
            self._partial = b""
            return self._file.read()
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
