"""An energy counter is read once a second on the schedule, and at every poll: each poll's window
starts and ends on a reading, so reading it less often loses nothing (the dashboard's and the
exporter's poll loops share `mark_at_poll`)."""

from __future__ import annotations

import time

import pytest

from collectors.export.exporter import SpectopExporter
from collectors.meters import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler
from collectors.servers.snapshot import ServerSnapshot

POWER_W = 250.0


class ClockCounter:
    """A RAPL-like counter: 250 W since it was opened, read off the monotonic clock, updating every ms."""

    info = MeterInfo("counter", ("CPU",), "CPU package", "counter", 0.001)

    def __init__(self) -> None:
        self.t0_s = time.monotonic()
        self.reads = 0

    def read(self) -> MeterReading:
        self.reads += 1
        t_s = time.monotonic()
        return MeterReading(t_s, POWER_W * (t_s - self.t0_s))

    def close(self) -> None:
        pass


class Polled:
    url, backend = "http://s", "llama.cpp"

    def __init__(self) -> None:
        self.taken_at_s: list[float] = []

    async def poll(self) -> ServerSnapshot:
        t_s = time.monotonic()
        self.taken_at_s.append(t_s)
        return ServerSnapshot(url=self.url, backend=self.backend, taken_at_s=t_s, status="ok")


async def test_every_poll_window_starts_and_ends_on_a_counter_reading():
    meter = ClockCounter()
    sampler = Sampler(meter).start()  # the default schedule: once a second for a counter
    try:
        collector = Polled()
        exporter = SpectopExporter(collector, sampler)
        await exporter.run(0.25, should_stop=lambda: len(collector.taken_at_s) >= 6)
    finally:
        sampler.stop()
    read_at = [r.t_s for r in sampler.readings()]
    for t_s in collector.taken_at_s:
        # the mark runs beside the poll: within a few ms, far inside the schedule's 1 s spacing
        assert min(abs(t - t_s) for t in read_at) < 0.1, (t_s, read_at)
    # six polls over ~1.3 s: six marks and the schedule's first read, not the 13 of a 10 Hz schedule;
    # its read at 1 s is skipped, a poll's mark having read the meter less than half a period before
    assert meter.reads <= 6 + 1
    # a window between the first and the last poll's marks is read at both ends: exact on the
    # counter (250 W × its length), and as long as 1 s windows of a 1 ms sensor may be, not "short"
    t0_s = min(read_at, key=lambda t: abs(t - collector.taken_at_s[0]))
    t1_s = min(read_at, key=lambda t: abs(t - collector.taken_at_s[-1]))
    window = sampler.energy_between(t0_s, t1_s)
    assert window.covered and not window.short_window
    assert window.energy_j == pytest.approx(POWER_W * (t1_s - t0_s), rel=1e-9)
