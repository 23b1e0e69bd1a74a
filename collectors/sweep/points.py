"""The sweep's point loop: each point of the schedule measured in turn, and stored before it is told.

Pitfalls handled: one bad answer must not end a sweep that has run for an hour, nor be hidden, so a
point that fails (a malformed answer, a broken or endless stream, a server that stopped) is shown
as "retrying: why" and measured once more from the start, a launched server started again if it
died; a second failure is raised, and the runner ends the sweep with it and a summary. A point
measured is on disk before its event is yielded, so a sweep stopped at any moment loses nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Protocol

from collectors.errors import SpectopError
from collectors.sweep import measure
from collectors.sweep.arms import ArmPool
from collectors.sweep.events import PointDone, PointProgressed, SweepEvent
from collectors.sweep.plan import PointKey
from collectors.sweep.point import SweepPoint
from collectors.sweep.store import RunStore


class Sweep(Protocol):
    """What the loop uses of a sweep's state (session.py `SweepSession`)."""

    should_stop: Callable[[], bool]
    pool: ArmPool
    store: RunStore
    rows: list[SweepPoint]

    def ready(self, key: PointKey) -> str: ...

    def run_point(self, url: str, key: PointKey, warm: bool) -> Coroutine[Any, Any, measure.Window]: ...

    def point_row(self, index: int, key: PointKey, window: measure.Window) -> SweepPoint: ...


def run_points(sweep: Sweep, keys: list[PointKey], first_index: int) -> Generator[SweepEvent, None, bool]:
    """Measure `keys` in order, a point that fails tried once more; returns True when stopped."""
    for index, key in enumerate(keys, start=first_index):
        if sweep.should_stop():
            return True
        try:
            window = yield from measure_point(sweep, index, key)
        except SpectopError as exc:  # shown, and the point measured again from the start
            yield PointProgressed(index, key, f"retrying: {exc.what}")
            window = yield from measure_point(sweep, index, key)
        if window.cancelled:
            return True
        row = sweep.point_row(index, key, window)
        sweep.store.append_point(row)
        sweep.rows.append(row)
        yield PointDone(index, key, row, tuple(window.records))
    return False


def measure_point(sweep: Sweep, index: int, key: PointKey) -> Generator[SweepEvent, None, measure.Window]:
    """One point: its server ready (started if spectop launches it), a warm-up, the measured window."""
    if sweep.pool.arms[key.arm].launched:
        yield PointProgressed(index, key, "starting server")
    url = sweep.ready(key)
    yield PointProgressed(index, key, "warm-up")
    asyncio.run(sweep.run_point(url, key, warm=True))
    yield PointProgressed(index, key, "running")
    return asyncio.run(sweep.run_point(url, key, warm=False))
