"""A clock that moves only when a test says, for running the simulator's engine off the wall clock.

Moving it forward is a stall of every thread at once: the engine finds itself late and catches
up by running the steps it owes back to back, so a run's tokens, timings and joules depend only
on the schedule, not on how fast or how loaded the machine is.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from collectors.simulator.accelerator import Accelerator
from collectors.simulator.tasks import Task, TaskResult


class ManualClock:
    """Time that moves only when the test says."""

    def __init__(self, t_s: float = 1000.0) -> None:
        self.t_s = t_s

    def __call__(self) -> float:
        return self.t_s

    def advance(self, dt_s: float) -> None:
        self.t_s += dt_s


def stall(accel: Accelerator, clock: ManualClock, dt_s: float, timeout_s: float = 60) -> None:
    """Stall every thread by `dt_s`, then let the engine catch up: wait until no step is overdue
    (the counter reads up to the clock again)."""
    deadline = time.monotonic() + timeout_s
    clock.advance(dt_s)
    while accel.read().t_s < clock():
        assert time.monotonic() < deadline, "the engine did not catch up"
        time.sleep(0.001)


def run_until(
    accel: Accelerator,
    clock: ManualClock,
    condition: Callable[[], bool],
    stall_s: float,
    timeout_s: float = 60,
) -> None:
    """Stall by `stall_s` at a time until `condition()` holds."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        stall(accel, clock, stall_s, timeout_s)


def run_until_done(accel: Accelerator, clock: ManualClock, tasks: list[Task], stall_s: float) -> None:
    """`run_until` the tasks are done."""
    run_until(accel, clock, lambda: all(t.done for t in tasks), stall_s)


@contextlib.contextmanager
def ticking(
    accel: Accelerator, clock: ManualClock, stall_s: float = 0.25, pause_s: float = 0.0
) -> Iterator[None]:
    """Time flows while the block runs: `stall_s` at a time, each once the engine has caught up
    with the last and `pause_s` of real time has passed."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            clock.advance(stall_s)
            while accel.read().t_s < clock() and not stop.wait(0.001):
                pass
            stop.wait(pause_s)

    thread = threading.Thread(target=tick, name="manual-clock", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def result_of(task: Task) -> TaskResult:
    """The final result of a finished task (its token events are drained and dropped)."""
    last = None
    while not task.out.empty():
        last = task.out.get_nowait()
    assert isinstance(last, TaskResult)
    return last
