"""The sampler's figures at their edges: window ends on a sample, held-level decreases, the power now,
and the schedule after a stalled read (checked only from below, so a loaded machine cannot fail it)."""

from __future__ import annotations

import threading
import time

import pytest

from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler
from tests.support.faulty_meters import ScriptedMeter, fed
from tests.support.manual_clock import ManualClock


class Counting:
    """Readings at 1, 2, 3, … s with 1 J each, as many as asked for."""

    info = MeterInfo("counting", ("x",), "test", "counter", 0.1)

    def __init__(self) -> None:
        self.n = 0

    def read(self) -> MeterReading:
        self.n += 1
        return MeterReading(float(self.n), float(self.n))

    def close(self) -> None:
        pass


def _kind(method: str, update_period_s: float) -> Counting:
    meter = Counting()
    meter.info = MeterInfo("k", ("x",), "test", method, update_period_s)  # type: ignore[arg-type,misc]
    return meter


def test_the_schedule_reads_each_kind_of_meter_as_often_as_it_needs():
    # a counter is exact at any read (windows get marks at their ends): once a second, like the poll
    assert Sampler(_kind("counter", 0.001)).period_s == pytest.approx(1.0)  # RAPL
    assert Sampler(_kind("counter", 30.0)).period_s == pytest.approx(1.0)  # DCGM's joules
    # power only: integrated at the sensor's own period, between 1 and 10 Hz
    assert Sampler(_kind("integrated", 0.02)).period_s == pytest.approx(0.1)
    assert Sampler(_kind("integrated", 0.5)).period_s == pytest.approx(0.5)
    assert Sampler(_kind("integrated", 30.0)).period_s == pytest.approx(1.0)
    # the CPU-load estimate is cubic in the load: a coarser read would change it, so 10 Hz
    assert Sampler(_kind("estimate", 0.1)).period_s == pytest.approx(0.1)
    assert Sampler(_kind("counter", 1.0), rate_hz=4.0).period_s == pytest.approx(0.25)  # asked


def test_keeps_an_hour_of_readings():
    sampler = Sampler(Counting(), rate_hz=10.0)
    assert sampler.last_error is None
    for _ in range(36_001):
        sampler.tick()
    assert len(sampler.readings()) == 36_000 and sampler.readings()[0].t_s == 2.0
    tiny = Sampler(Counting(), max_samples=1)  # two are kept all the same: a window needs both ends
    for _ in range(5):
        tiny.tick()
    assert [r.t_s for r in tiny.readings()] == [4.0, 5.0]


def test_the_rate_must_be_positive():
    with pytest.raises(ValueError, match="^rate_hz must be positive$"):
        Sampler(Counting(), rate_hz=0)
    assert Sampler(Counting(), rate_hz=0.5).period_s == 2.0


def test_a_window_that_starts_and_ends_on_samples_is_covered():
    s = fed(*(MeterReading(float(t), 10.0 * t) for t in range(11)))
    w = s.energy_between(0.0, 10.0)
    assert w.covered and w.energy_j == 100.0 and w.n_samples == 11
    empty = s.energy_between(5.0, 5.0)  # an empty window is a window, not an error
    assert empty.energy_j == 0.0 and empty.power_w is None
    with pytest.raises(ValueError, match="^t1_s must not be before t0_s$"):
        s.energy_between(5.0, 4.0)
    assert (s.energy_at(0.0), s.energy_at(10.0), s.energy_at(9.5)) == (0.0, 100.0, 95.0)


def test_every_decrease_is_held_level_and_a_flat_reading_is_not_one():
    s = fed(*(MeterReading(float(t), e) for t, e in enumerate([10.0, 5.0, 8.0, 8.0, 2.0, 4.0])))
    # 10, then a reset to 5 (offset 5), 8 → 13, 8 → 13 (flat, no decrease), 2 → 7 < 13 (offset 11), 4 → 15
    assert [r.energy_j for r in s.readings()] == [10.0, 10.0, 13.0, 13.0, 13.0, 15.0]
    assert s.decreases == 2


def test_power_now_is_the_meters_own_else_the_last_two_samples_slope():
    s = Sampler(ScriptedMeter([MeterReading(0.0, 0.0), MeterReading(1.0, 10.0), MeterReading(3.0, 40.0)]))
    s.tick()
    assert s.power_w_now() is None  # one energy-only sample: no slope yet
    s.tick()
    assert s.power_w_now() == 10.0
    s.tick()
    assert s.power_w_now() == 15.0  # 30 J over the last 2 s
    assert fed(MeterReading(0.0, 0.0, power_w=7.5)).power_w_now() == 7.5


def test_wait_for_a_sample_that_is_there_or_comes():
    s = fed(MeterReading(5.0, 1.0))
    assert s.wait_for(5.0, 0.01)  # a sample exactly at the time
    assert not s.wait_for(6.0, 0.01)
    late = Sampler(ScriptedMeter([MeterReading(5.0, 1.0), MeterReading(6.0, 2.0)]))
    late.tick()
    ticker = threading.Timer(0.05, late.tick)
    ticker.start()
    w = late.energy_between(5.0, 6.0, wait_s=0.5)  # the window's end arrives while it waits
    ticker.join()
    assert w.covered and w.energy_j == 1.0


def test_the_thread_is_named_daemonic_restartable_and_a_stop_before_start_is_fine():
    sampler = Sampler(Counting(), rate_hz=200.0)
    sampler.stop()
    sampler.start()
    thread = sampler._thread
    assert thread is not None and thread.name == "sampler-counting" and thread.daemon
    assert sampler.start()._thread is thread  # started once
    sampler.stop()
    assert not thread.is_alive()
    sampler.start()
    assert sampler._thread is not thread and sampler._thread.is_alive()
    sampler.stop()


class StallOnce:
    """A meter whose second read stalls for 3.5 periods (its clock jumps), and that stops the sampler at
    its fourth read. The clock remembers its first reading: where the sampler's grid begins."""

    info = MeterInfo("stall", ("x",), "test", "counter", 0.05)

    def __init__(self) -> None:
        self.offset_s, self.reads_at = 0.0, []
        self.first_s: float | None = None
        self.sampler: Sampler | None = None

    def clock(self) -> float:
        now = time.monotonic() + self.offset_s
        if self.first_s is None:
            self.first_s = now
        return now

    def read(self) -> MeterReading:
        t = self.clock()
        self.reads_at.append(t)
        if len(self.reads_at) == 2:
            self.offset_s += 3.5 * 0.05
        if len(self.reads_at) == 4 and self.sampler is not None:
            self.sampler._stop.set()
        return MeterReading(t, float(len(self.reads_at)))

    def close(self) -> None:
        pass


def test_after_a_stalled_read_the_next_ticks_stay_on_the_grid():
    # 50 ms periods from t0; the second read ends 4.5 periods in, so the next grid point is 5 periods
    # in: the sampler waits for it rather than reading at once (a burst) or dying. Checked only from
    # below: waits never end early, so a loaded machine cannot fail it.
    meter = StallOnce()
    sampler = Sampler(meter, rate_hz=20.0, clock=meter.clock)
    meter.sampler = sampler
    sampler.start()
    sampler._thread.join(10.0)
    assert len(meter.reads_at) == 4 and meter.first_s is not None
    assert meter.reads_at[2] - meter.first_s >= 5 * 0.05 - 1e-9
    assert meter.reads_at[3] - meter.first_s >= 6 * 0.05 - 1e-9


class StopAfter:
    """The sampler's stop event on a manual clock: each wait moves the clock by what was asked and
    records it; set after `waits` waits. The schedule's arithmetic, with no real time in it."""

    def __init__(self, clock: ManualClock, waits: int) -> None:
        self.clock, self.left, self.asked_s = clock, waits, []

    def is_set(self) -> bool:
        return self.left <= 0

    def wait(self, timeout_s: float) -> bool:
        self.asked_s.append(timeout_s)
        self.clock.advance(max(0.0, timeout_s))
        self.left -= 1
        return self.is_set()


class SlowReads:
    """Reads that take the scripted seconds of the manual clock, one entry per read."""

    info = MeterInfo("slow", ("x",), "test", "counter", 0.25)

    def __init__(self, clock: ManualClock, read_s: list[float]) -> None:
        self.clock, self.read_s, self.reads_at = clock, list(read_s), []

    def read(self) -> MeterReading:
        self.reads_at.append(self.clock())
        self.clock.advance(self.read_s.pop(0))
        return MeterReading(self.clock(), float(len(self.reads_at)))

    def close(self) -> None:
        pass


def test_the_schedule_waits_for_the_next_grid_point_after_a_stall_and_not_past_one_due_now():
    # 4 Hz: the grid is 0, 0.25, 0.5, … s (binary fractions: the arithmetic is exact).
    # read 1 at 0 takes 0: wait 0.25; read 2 at 0.25 stalls 0.375 s to 0.625, so 0.5 is missed
    # and 0.75 is next: wait 0.125; read 3 at 0.75 takes exactly one period, to 1.0, which is itself a
    # grid point, due now: wait 0 and read at once; read 4 at 1.0 takes 0: wait 0.25.
    clock = ManualClock(0.0)
    meter = SlowReads(clock, [0.0, 0.375, 0.25, 0.0])
    sampler = Sampler(meter, rate_hz=4.0, clock=clock)
    sampler._stop = StopAfter(clock, waits=4)
    sampler._run()
    assert meter.reads_at == [0.0, 0.25, 0.75, 1.0]
    assert sampler._stop.asked_s == [0.25, 0.125, 0.0, 0.25]
