"""A small Textual app on spectop's terminal driver, run on a pseudo-terminal by tests/tui/test_driver.py.

`python -m tests.support.keys_app stock|quiet`. It writes, as lines on its screen: `keys-app ready`
once mounted; `idle-wakeups N`, the input thread's voluntary context switches over one second in
which nothing is typed, half a second after that; and `key NAME` for each key it is given.
`q` quits.
"""

from __future__ import annotations

import sys
import threading

from textual.app import App, ComposeResult
from textual.drivers.linux_driver import LinuxDriver
from textual.events import Key
from textual.widgets import Log

from tui.driver import QuietInputDriver

IDLE_S = 1.0


def switches(thread_name: str) -> int:
    """The named thread's voluntary context switches so far: each is one wait that ended."""
    native = next(t.native_id for t in threading.enumerate() if t.name == thread_name)
    with open(f"/proc/self/task/{native}/status") as status:
        line = next(line for line in status if line.startswith("voluntary_ctxt_switches"))
    return int(line.split()[1])


class KeysApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Log()

    def on_mount(self) -> None:
        self.query_one(Log).write_line("keys-app ready")
        self.set_timer(0.5, self.start_counting)

    def start_counting(self) -> None:
        before = switches("textual-input")
        self.set_timer(
            IDLE_S,
            lambda: self.query_one(Log).write_line(f"idle-wakeups {switches('textual-input') - before}"),
        )

    def on_key(self, event: Key) -> None:
        self.query_one(Log).write_line(f"key {event.key}")
        if event.key == "q":
            self.exit()


if __name__ == "__main__":
    KeysApp(driver_class=QuietInputDriver if sys.argv[1:] == ["quiet"] else LinuxDriver).run()
