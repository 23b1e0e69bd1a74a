"""A terminal driver whose input thread sleeps until a key arrives.

Textual's LinuxDriver wakes its input thread ten times a second, typed keys or not, to check the
parser's escape-key timeout. Watching a server, each of those wakeups cost this machine kind
0.1-0.2 ms of CPU: 12-15 of a dashboard's ~140 ticks a minute (collectors/docs/performance.md,
"sixth round"). This driver blocks in `select` until input arrives, waits 0.1 s (Textual's
period) only while the parser holds a lone escape, and is woken for exit through a pipe that the
exit event writes to. Everything else is Textual's (pinned in pyproject.toml): the loop below is
`LinuxDriver.run_input_thread` of Textual 8.2.8 with the timeout changed.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from typing import TYPE_CHECKING, Any

from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

PENDING_ESCAPE_POLL_S = 0.1  # Textual's own period, kept while a lone escape awaits its timeout
READ_BYTES = 4096


class _WakingEvent(threading.Event):
    """The driver's exit event: setting it also wakes the input thread's `select`."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self.wake_fd: int | None = wake_fd  # None once the driver closed the pipe

    def set(self) -> None:
        super().set()
        if self.wake_fd is None:  # closed: its number may be another file's by now
            return
        try:
            os.write(self.wake_fd, b"\0")
        except BlockingIOError:  # the pipe is full: a wake is already pending
            pass


def quiet_in_place_of(driver_class: type[Driver]) -> type[Driver]:
    """`QuietInputDriver` where Textual picked LinuxDriver; its pick elsewhere (Windows, or
    TEXTUAL_DRIVER set)."""
    return QuietInputDriver if driver_class is LinuxDriver else driver_class


class QuietInputDriver(LinuxDriver):
    """LinuxDriver, its input thread asleep while nothing is typed."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._wake_read_fd, self._wake_write_fd = os.pipe()
        os.set_blocking(self._wake_read_fd, False)
        os.set_blocking(self._wake_write_fd, False)
        self.exit_event: _WakingEvent = _WakingEvent(self._wake_write_fd)

    def close(self) -> None:
        super().close()
        self.exit_event.wake_fd = None
        for fd in (self._wake_read_fd, self._wake_write_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def _drain_wakes(self) -> None:
        try:
            while os.read(self._wake_read_fd, READ_BYTES):
                pass
        except (BlockingIOError, OSError):
            pass

    def run_input_thread(self) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read_fd, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(events: list[tuple[selectors.SelectorKey, int]]) -> None:
            for key, _mask in events:
                if key.fd == self._wake_read_fd:
                    self._drain_wakes()
                    continue
                text = decode(os.read(self.fileno, READ_BYTES))
                if not text:  # stdin piped and at its end
                    break
                for event in parser.feed(text):
                    self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                # the parser's private deadline: pinned Textual, and the only sign of a lone escape
                pending = parser._timeout_time is not None
                process(selector.select(PENDING_ESCAPE_POLL_S if pending else None))
            for event in parser.tick():
                self.process_message(event)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
