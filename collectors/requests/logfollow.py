"""Follow a growing log like `tail -F`: a file path, or `-` for a pipe on standard input.

Pitfalls handled: a rotated file (renamed or deleted, a new one made under the name) is read to
its end and then the new file from its start; a truncated file (`> log`, copytruncate) is read
again from its start; a file not there yet, or gone for a while, is waited for; a line written in
two parts is returned once, whole; bytes that are not UTF-8 are replaced, never raised. A pipe is
read with a timeout (`select`), so a follower waiting on a quiet server still returns to its
caller, which can stop it. `poll` never blocks longer than `timeout_s`. A named pipe (FIFO) is
opened without waiting for its writer and read like a pipe, so quitting never hangs on one nobody
writes; a device or socket (`/dev/zero`) is refused, also when a rotation swaps one in. Reads are
bounded: at most `READ_PER_POLL` a poll, and a line longer than `MAX_LINE_BYTES` is dropped whole
and counted (`long_lines`), so a server printing without newlines cannot grow spectop's memory.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from typing import BinaryIO

from collectors.errors import SpectopError

READ_CHUNK = 65536
READ_PER_POLL = 4 << 20  # of a file, each poll; the rest is read by the next polls
MAX_LINE_BYTES = 1 << 20  # a log line longer than this is no slot line: dropped, counted
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
        self.long_lines = 0  # lines dropped for their length
        self._dropping = False  # inside a line too long to keep: skipped up to its newline
        self._fifo = False  # a named pipe: its writer may close it and another open it again
        if path == STDIN:
            self._fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
        elif os.path.isdir(path):
            raise SpectopError(
                f"--server-log {path} is a directory", "give the server's log file, or - for a pipe"
            )
        elif _is_fifo(path):
            self._fifo = True
            self._fd = _open_fifo(path)
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
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            handle.close()
            raise SpectopError(
                f"--server-log {self.path} is not a file (a device or a socket)",
                "give the server's log file, or - (or a named pipe) for a pipe",
            )
        if self._file is not None:
            self._file.close()
        self._file = handle
        self._inode = (info.st_dev, info.st_ino)
        if seek_end:
            handle.seek(0, os.SEEK_END)

    def poll(self, timeout_s: float = 0.0) -> list[str]:
        """The lines completed since the last poll (without their newlines)."""
        data = self._read_pipe(timeout_s) if self._fd is not None else self._read_file()
        if not data:
            return []
        data, self._partial = self._partial + data, b""
        *lines, rest = data.split(b"\n")
        if lines and self._dropping:  # the end of a line too long to keep
            lines, self._dropping = lines[1:], False
        if len(rest) > MAX_LINE_BYTES and not self._dropping:
            self._dropping = True
            self.long_lines += 1
        lines = [line for line in lines if len(line) <= MAX_LINE_BYTES or self._count_long()]
        self._partial = b"" if self._dropping else rest
        return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]

    def _count_long(self) -> bool:
        self.long_lines += 1
        return False

    def _read_pipe(self, timeout_s: float) -> bytes:
        assert self._fd is not None
        if self.ended:
            return b""
        ready, _, _ = select.select([self._fd], [], [], timeout_s)
        if not ready:
            return b""
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return b""
        if not data:  # the writer closed the pipe: what was left is the last line
            if not self._fifo:
                self.ended = True
            else:  # a named pipe waits for its next writer; no busy wait on its end of file
                os.close(self._fd)
                self._fd = _open_fifo(self.path)
            return b"\n" if self._partial else b""
        return data

    def _read_file(self) -> bytes:
        if self._file is None:
            self._open(seek_end=False)  # it appeared: all of it is new
            if self._file is None:
                return b""
        data = self._file.read(READ_PER_POLL)
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return data  # moved away: keep reading the old one until a new one appears
        if len(data) == READ_PER_POLL:
            return data  # more to come: a rotation is seen once the old file is read to its end
        if (info.st_dev, info.st_ino) != self._inode:  # rotated: the old file's rest, then the new one
            whole, _, _cut = (self._partial + data).rpartition(b"\n")  # a cut last line is dropped
            self._partial = b""
            self._open(seek_end=False)
            assert self._file is not None
            return (whole + b"\n" if whole else b"") + self._file.read(READ_PER_POLL)
        if info.st_size < self._file.tell():  # truncated in place: start again
            self._file.seek(0)
            self._partial = b""
            return self._file.read(READ_PER_POLL)
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._fifo and self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _open_fifo(path: str) -> int:
    """A named pipe, opened without waiting for a writer (a plain open blocks until one comes)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SpectopError(
            f"cannot read --server-log {path}: {exc.strerror or exc}", "check the path and its permissions"
        ) from exc
