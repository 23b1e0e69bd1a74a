"""The terminal driver's input thread sleeps while nothing is typed (tui/driver.py), and still gives
every key: a letter, a lone escape (which only a timeout tells from the start of a sequence), and
the quit key, after which the app ends at once.

Run as a user runs a terminal program: a subprocess on a pseudo-terminal, keys written to it. The
stock driver is run too, so the idle count is known to tell them apart on this machine."""

from __future__ import annotations

import re
import sys

import pytest

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
