"""The terminal driver's input thread sleeps while nothing is typed (tui/driver.py), and still gives
every key: a letter, a lone escape (which only a timeout tells from the start of a sequence), and
the quit key, after which the app ends at once.

Run as a user runs a terminal program: a subprocess on a pseudo-terminal, keys written to it. The
stock driver is run too, so the idle count is known to tell them apart on this machine."""

from __future__ import annotations

import os
import re
import signal
import sys

import pytest
from textual.app import App

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tests.support.terminal import Terminal
from tui.app import SpectopApp
from tui.config import Settings
from tui.driver import QuietInputDriver


def idle_wakeups(term: Terminal) -> int:
    term.until(b"idle-wakeups", timeout_s=20)
    term.read(0.2)
    found = re.search(rb"idle-wakeups (\d+)", term.screen)
    assert found is not None
    return int(found.group(1))


@pytest.mark.parametrize(
    "driver", ["quiet", pytest.param("stock", marks=pytest.mark.slow)]
)  # stock: the control
def test_keys_arrive_and_the_idle_input_thread_sleeps_only_on_the_quiet_driver(driver):
    term = Terminal([sys.executable, "-m", "tests.support.keys_app", driver], size=(60, 12))
    try:
        term.until(b"keys-app ready", timeout_s=20)
        wakeups = idle_wakeups(term)
        if driver == "quiet":
            assert wakeups <= 1  # asleep in select: nothing typed, nothing to do
        else:
            assert wakeups >= 5  # Textual's own wakes ten times a second
        term.keys(b"a")
        term.until(b"key a", timeout_s=5)
        term.keys(b"\x1b")  # alone: the parser holds it until its timeout, then it is the escape key
        term.until(b"key escape", timeout_s=5)
        term.keys(b"q")
        assert term.proc.wait(timeout=10) == 0  # woken for exit, not left in select
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
        term.close()


def test_the_dashboard_runs_on_the_quiet_driver():
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    assert app.driver_class is QuietInputDriver


async def test_a_closed_driver_writes_nothing_into_a_file_that_took_its_pipes_number():
    """Exit may be asked again after the driver closed its wake pipe; the pipe's number may by then
    be another file's, which must not get the wake byte."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTSTP, signal.SIGCONT)}
    try:
        driver = QuietInputDriver(App())
        closed_write_fd = driver.exit_event.wake_fd
        driver.close()
        read_fd, write_fd = os.pipe()  # the lowest free numbers: the closed pipe's, read end first
        os.set_blocking(read_fd, False)
        moved = closed_write_fd not in (read_fd, write_fd)
        try:
            assert closed_write_fd != read_fd
            if moved:  # a number was taken meanwhile: put this pipe's write end on the free one
                with pytest.raises(OSError):
                    os.fstat(closed_write_fd)  # free: no other file of this process is replaced
                os.dup2(write_fd, closed_write_fd)
            driver.exit_event.set()
            with pytest.raises(BlockingIOError):
                os.read(read_fd, 16)  # nothing was written
        finally:
            os.close(read_fd)
            os.close(write_fd)
            if moved:
                os.close(closed_write_fd)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
