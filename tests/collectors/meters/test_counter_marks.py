"""An energy counter is read once a second on the schedule, and at every poll: each poll's window
starts and ends on a reading, so reading it less often loses nothing (the dashboard's and the
exporter's poll loops share `mark_at_poll`)."""

from __future__ import annotations

import threading
import time
from collections import namedtuple

import pytest

from collectors.export.exporter import SpectopExporter
from collectors.meters import MeterInfo, MeterReading
from collectors.meters.estimate import EstimateMeter
from collectors.meters.rapl import RaplMeter
from collectors.meters.sampler import (
    MARKED_WAKE_PERIODS,
    Sampler,
    default_rate_hz,
    mark_at_poll,
    watching_rate_hz,
)
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


CpuTimes = namedtuple("CpuTimes", "user idle")


async def test_a_watched_estimate_is_read_once_a_second_and_at_every_poll():
    # the CPU half busy by the clock: load 0.5, so 100 W × (0.1 + 0.9 × 0.5³) = 21.25 W by the model
    meter = EstimateMeter(tdp_w=100.0, cpu_times=lambda: CpuTimes(*(time.monotonic() / 2,) * 2), threads=2)
    reads = 0
    real_read = meter.read

    def counted_read() -> MeterReading:
        nonlocal reads
        reads += 1
        return real_read()

    meter.read = counted_read  # type: ignore[method-assign]
    # a sweep keeps the 10 Hz schedule; a watcher reads once a second
    assert default_rate_hz(meter.info) == 10.0 and watching_rate_hz(meter.info) == 1.0
    sampler = Sampler(meter, watching_rate_hz(meter.info)).start()
    try:
        collector = Polled()
        await SpectopExporter(collector, sampler).run(
            0.25, should_stop=lambda: len(collector.taken_at_s) >= 6
        )
    finally:
        sampler.stop()
    assert sampler.reads_on_marks
    read_at = [r.t_s for r in sampler.readings()]
    for t_s in collector.taken_at_s:
        assert min(abs(t - t_s) for t in read_at) < 0.1, (t_s, read_at)
    assert reads <= 6 + 1  # six marks and the schedule's first read, not a 10 Hz schedule's 13
    # the running joules integrate the load between reads: a window on two marks is the model's
    # power × its length, and not "short" for the estimate's 0.1 s update period
    t0_s = min(read_at, key=lambda t: abs(t - collector.taken_at_s[0]))
    t1_s = min(read_at, key=lambda t: abs(t - collector.taken_at_s[-1]))
    window = sampler.energy_between(t0_s, t1_s)
    assert window.covered and not window.short_window
    assert window.energy_j == pytest.approx(21.25 * (t1_s - t0_s), rel=1e-6)


class ThreadNoting(ClockCounter):
    """The counter, noting which thread each read ran on; `reads_at_once` as the test sets it."""

    def __init__(self, reads_at_once: bool) -> None:
        super().__init__()
        self.reads_at_once = reads_at_once
        self.threads: list[threading.Thread] = []

    def read(self) -> MeterReading:
        self.threads.append(threading.current_thread())
        return super().read()


@pytest.mark.parametrize("at_once", [True, False])
async def test_a_mark_reads_a_local_meter_on_the_event_loop_and_any_other_on_a_worker_thread(at_once):
    # a sysfs or /proc read takes microseconds: a worker thread's hand-over and back costs more; a
    # remote page, a driver call may block, so they stay off the loop
    meter = ThreadNoting(at_once)
    sampler = Sampler(meter, rate_hz=1.0)  # not started: only marks read it
    assert sampler.reads_on_marks
    await mark_at_poll([sampler, sampler, None])  # a meter shared by two servers is read once
    assert len(meter.threads) == 1
    assert (meter.threads[0] is threading.current_thread()) is at_once
    assert [r.energy_j for r in sampler.readings()] == [
        pytest.approx(POWER_W * (sampler.latest().t_s - meter.t0_s))
    ]


def test_the_meters_that_read_local_files_are_read_at_once():
    assert EstimateMeter.reads_at_once is True and RaplMeter.reads_at_once is True
    assert Sampler(EstimateMeter(tdp_w=10.0), rate_hz=1.0).reads_at_once
    assert not Sampler(ClockCounter(), rate_hz=1.0).reads_at_once  # a meter that does not say is not


class CountingEvent(threading.Event):
    """The sampler's stop event, counting the schedule thread's sleeps (one a wakeup)."""

    sleeps = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.sleeps += 1
        return super().wait(timeout)


def test_while_polls_mark_a_counter_its_schedule_wakes_only_to_cover_a_stall():
    # each wakeup of the schedule's thread cost the export more than its meter reads; while the
    # polls mark the counter every period, the thread sleeps MARKED_WAKE_PERIODS periods at a time
    period_s = 0.05
    meter = ClockCounter()
    sampler = Sampler(meter, rate_hz=1 / period_s)
    sampler._stop = wakes = CountingEvent()
    sampler.start()
    try:
        marks_end_s = time.monotonic() + 40 * period_s
        while time.monotonic() < marks_end_s:
            sampler.mark()
            time.sleep(period_s)
        sleeps_while_marked = wakes.sleeps
        time.sleep((MARKED_WAKE_PERIODS + 4) * period_s)  # then the polls stop (a server that hangs)
    finally:
        sampler.stop()
    assert sleeps_while_marked < 40 / 2, sleeps_while_marked  # about 40 / MARKED_WAKE_PERIODS, not 40
    # the schedule reads again once the marks stop: the power history goes on without polls
    after = [r.t_s for r in sampler.readings() if r.t_s > marks_end_s + period_s / 2]
    assert after and after[0] - marks_end_s <= (MARKED_WAKE_PERIODS + 1.5) * period_s, after
    assert len(after) >= 2  # and keeps to its period after that


def test_a_sweeps_estimate_keeps_its_ten_hz_schedule_through_a_mark():
    # the estimate's model is cubic in the load: in a sweep every tenth of a second read counts
    # (it is read on its schedule, not on marks), so a point's mark does not put the schedule to
    # sleep as a watcher's polls put a counter's
    meter = EstimateMeter(tdp_w=100.0, cpu_times=lambda: CpuTimes(*(time.monotonic() / 2,) * 2), threads=2)
    sampler = Sampler(meter).start()  # a sweep's: default_rate_hz, 10 Hz
    try:
        time.sleep(0.15)
        marked = sampler.mark()
        time.sleep(0.6)
    finally:
        sampler.stop()
    assert marked is not None and not sampler.reads_on_marks
    after = [r.t_s for r in sampler.readings() if r.t_s > marked.t_s]
    assert len(after) >= 4, after  # about 6 in 0.6 s, not one at the mark + 5 periods
