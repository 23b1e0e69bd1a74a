"""What the dashboard tests share: a collector that replays snapshots, a sampler that holds
readings, the text a widget shows on screen, and waiting for the app."""

from __future__ import annotations

import dataclasses
import time

from collectors.meters import MeterInfo, MeterReading
from collectors.servers.snapshot import ServerSnapshot


class FakeCollector:
    """Replays snapshots in order, re-stamped with the current time; the last one repeats."""

    def __init__(self, snapshots: list[ServerSnapshot]) -> None:
        self.snapshots = list(snapshots)
        self.polls = 0

    async def poll(self) -> ServerSnapshot:
        snap = self.snapshots[min(self.polls, len(self.snapshots) - 1)]
        self.polls += 1
        return dataclasses.replace(snap, taken_at_s=time.monotonic())

    async def busy_slots(self) -> int | None:
        return 0


class FakeMeter:
    def __init__(self, info: MeterInfo) -> None:
        self.info = info


class FakeSampler:
    """What the app reads from a Sampler: its meter's info and new readings."""

    reads_on_marks = False  # its readings are given: nothing to read at a poll

    def __init__(self, info: MeterInfo, readings: list[MeterReading] | None = None) -> None:
        self.meter = FakeMeter(info)
        self._readings = readings or []
        self.failed_ticks = 0
        self.last_error: str | None = None

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        return [r for r in self._readings if since_t_s is None or r.t_s > since_t_s]


def text_of(widget) -> str:
    """What a widget shows on screen, line by line."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def wait_until(pilot, condition, timeout_s: float = 60.0) -> None:
    """Let the app run until `condition()` holds (workers post messages; the poller never ends)."""
    for _ in range(int(timeout_s / 0.02)):
        if condition():
            await pilot.pause()  # and let the screen catch up with what made it true
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out waiting for the app")
