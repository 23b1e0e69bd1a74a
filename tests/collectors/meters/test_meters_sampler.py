"""Sampler: known-truth window energy through the real thread, interpolation, no extrapolation, guards."""

from __future__ import annotations

import math
import statistics
import threading
import time

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters.accumulate import PowerIntegrator
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler, WindowEnergy
from tests.support.faulty_meters import ScriptedMeter, fed
from tests.support.meter_fakes import FakeClock

PERIOD_S = 0.02  # the fake sensor's update period; the sampler runs at 1 / PERIOD_S
WAVE_S = 0.7


def true_power_w(t: float) -> float:
    return 200.0 + 100.0 * math.sin(2 * math.pi * t / WAVE_S)


def true_energy_j(t: float) -> float:
    """The integral of true_power_w from 0."""
    return 200.0 * t - 100.0 * WAVE_S / (2 * math.pi) * (math.cos(2 * math.pi * t / WAVE_S) - 1.0)


SLOPE_MAX_W_PER_S = 100.0 * 2 * math.pi / WAVE_S  # the largest |dP/dt| of true_power_w
CURVE_MAX_W_PER_S2 = 100.0 * (2 * math.pi / WAVE_S) ** 2  # the largest |d²P/dt²|


def read_error_bound_j(ts: list[float], t0: float, t1: float, integrated: bool) -> float:
    """The most a window's energy can be off given when the meter was read (error analysis, no fit).

    Linear interpolation of the energy inside the read interval at each end is off by at most
    h²/8·max|P'|; a meter that integrates its power reads (trapezoid rule) is also off by at most
    h³/12·max|P''| on every interval the window touches. Reads 20 ms apart keep this near 0.3 % of
    a 10-period window; a loaded machine that delays reads widens it by exactly what those reads
    could know, which is what the sampler must stay within.
    """
    spans = [(a, b) for a, b in zip(ts, ts[1:]) if b > t0 and a < t1]
    ends = [b - a for a, b in spans if a <= t0 <= b or a <= t1 <= b]
    bound = sum(h * h / 8 * SLOPE_MAX_W_PER_S for h in ends)
    if integrated:
        bound += sum((b - a) ** 3 / 12 * CURVE_MAX_W_PER_S2 for a, b in spans)
    return bound


class TruthCounter:
    """A counter meter whose value is the true energy at the moment of the read."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.info = MeterInfo("truth", ("fake",), "test", "counter", PERIOD_S)

    def read(self) -> MeterReading:
        t = time.monotonic()
        return MeterReading(t, true_energy_j(t - self.t0), true_power_w(t - self.t0))

    def close(self) -> None:
        pass


class TruthPower(TruthCounter):
    """A power-only meter: integrates its instantaneous power reads, as NVML without a counter does."""

    def __init__(self) -> None:
        super().__init__()
        self.info = MeterInfo("truth", ("fake",), "test", "integrated", PERIOD_S)
        self.integ = PowerIntegrator()

    def read(self) -> MeterReading:
        t = time.monotonic()
        p = true_power_w(t - self.t0)
        self.integ.add(t, p)
        return MeterReading(t, self.integ.energy_j, p)


@pytest.mark.parametrize("meter_cls", [TruthCounter, TruthPower])
def test_known_truth_windows_within_one_percent(meter_cls):
    meter = meter_cls()
    with Sampler(meter, rate_hz=1 / PERIOD_S) as sampler:
        time.sleep(1.3)
    samples = sampler.readings()
    assert sampler.failed_ticks == 0 and len(samples) > 40
    start = samples[1].t_s + 0.013  # off the sample grid, so both ends are interpolated
    checked = 0
    for periods in (10, 15, 25, 40):
        t1 = start + periods * PERIOD_S
        if t1 > samples[-1].t_s:
            continue
        w = sampler.energy_between(start, t1)
        truth = true_energy_j(t1 - meter.t0) - true_energy_j(start - meter.t0)
        assert w.covered and not w.short_window
        ts = [r.t_s for r in samples]
        bound = read_error_bound_j(ts, start, t1, meter.info.method == "integrated")
        assert abs(w.energy_j - truth) <= bound + 1e-6, (periods, w.energy_j, truth, bound)
        if max(b - a for a, b in zip(ts, ts[1:])) <= 1.5 * PERIOD_S:  # reads on time: within 1 %
            assert w.energy_j == pytest.approx(truth, rel=0.01), periods
        assert w.method == meter.info.method and w.update_period_s == PERIOD_S
        checked += 1
    assert checked >= 3
    short = sampler.energy_between(start, start + 5 * PERIOD_S)
    assert short.short_window and short.covered


def test_linear_interpolation_at_both_ends():
    s = fed(MeterReading(0.0, 0.0), MeterReading(1.0, 10.0), MeterReading(2.0, 30.0), MeterReading(3.0, 31.0))
    w = s.energy_between(0.5, 2.5)
    assert isinstance(w, WindowEnergy)
    assert w.energy_j == pytest.approx(30.5 - 5.0)
    assert w.covered and w.n_samples == 2
    assert w.power_w == pytest.approx(25.5 / 2.0)
    assert s.energy_at(1.5) == pytest.approx(20.0) and s.energy_at(3.5) is None


def test_never_extrapolates_past_the_last_sample():
    s = fed(MeterReading(10.0, 100.0), MeterReading(11.0, 110.0))
    w = s.energy_between(10.5, 13.0)
    assert not w.covered
    assert w.energy_j == pytest.approx(5.0)  # only the covered part: 10.5 .. 11.0
    before = s.energy_between(9.0, 10.5)
    assert not before.covered and before.energy_j == pytest.approx(5.0)
    empty = Sampler(ScriptedMeter([])).energy_between(0.0, 1.0)
    assert not empty.covered and empty.energy_j == 0.0 and empty.n_samples == 0


def test_short_window_uses_the_slower_of_sensor_and_sampling():
    s = fed(*(MeterReading(t * 0.1, t) for t in range(200)), period_s=1.0)  # a 1 s average sensor
    assert s.energy_between(1.0, 9.9).short_window
    assert not s.energy_between(1.0, 11.0).short_window
    fast = fed(*(MeterReading(t * 0.2, t) for t in range(40)), period_s=0.001)  # RAPL-like, read 5 Hz
    # ends 0.1 s from any reading are interpolated: 10 of the schedule's 0.1 s periods are needed
    assert fast.energy_between(0.1, 0.9).short_window
    assert not fast.energy_between(0.1, 1.3).short_window


def test_a_counter_window_with_read_ends_is_as_exact_as_the_sensor():
    # both ends read (marks): the counter's difference is exact, whatever the schedule's spacing
    fast = fed(*(MeterReading(t * 0.1, t) for t in range(40)), period_s=0.001)
    assert not fast.energy_between(0.5, 0.6).short_window  # 100 sensor periods, ends on readings
    assert fast.energy_between(0.5, 0.505).short_window  # 5 sensor periods


def test_decrease_is_held_level_and_later_increments_kept():
    s = fed(MeterReading(1.0, 10.0), MeterReading(2.0, 4.0), MeterReading(3.0, 7.0))
    assert [r.energy_j for r in s.readings()] == [10.0, 10.0, 13.0]
    assert s.decreases == 1


def test_failed_ticks_and_repeated_timestamps():
    s = fed(
        MeterReading(1.0, 1.0),
        MeterUnavailable("exporter did not answer", "check the URL"),
        MeterReading(1.0, 1.0),  # a throttled remote meter returning its cached reading
        RuntimeError("library bug"),
        MeterReading(2.0, 3.0, power_w=2.0),
    )
    assert s.ticks == 5 and s.failed_ticks == 2
    assert s.last_error == "RuntimeError: library bug"
    assert len(s.readings()) == 2
    assert s.readings(since_t_s=1.0) == [MeterReading(2.0, 3.0, 2.0)]
    assert s.power_w_now() == 2.0


def test_power_now_from_slope_and_bounded_memory():
    s = Sampler(ScriptedMeter([MeterReading(float(t), 5.0 * t) for t in range(10)]), max_samples=4)
    assert s.power_w_now() is None and s.latest() is None
    for _ in range(10):
        s.tick()
    assert len(s.readings()) == 4 and s.readings()[0].t_s == 6.0
    assert s.power_w_now() == pytest.approx(5.0)


class SlowMeter:
    """Each read takes 10 ms, as a slow library call might."""

    info = MeterInfo("slow", ("x",), "test", "counter", 0.1)

    def __init__(self) -> None:
        self.energy = 0.0

    def read(self) -> MeterReading:
        time.sleep(0.01)
        self.energy += 1.0
        return MeterReading(time.monotonic(), self.energy)

    def close(self) -> None:
        pass


def test_fixed_rate_without_drift_and_wait_for_the_window_end():
    sampler = Sampler(SlowMeter(), rate_hz=20.0)
    with sampler:
        t_end = time.monotonic() + 0.3
        w = sampler.energy_between(time.monotonic() - 10.0, t_end, wait_s=2.0)
        assert w.t1_s == t_end and sampler.latest().t_s >= t_end  # waited for the end sample
        time.sleep(1.0)
    times = [r.t_s for r in sampler.readings()]
    # Scheduling from now would give one tick per 60 ms (50 ms + the 10 ms read); on the grid the
    # typical tick is 50 ms. The median, not the count: a loaded machine may skip a tick (100 ms)
    # now and then, which a count over the span would read as drift.
    assert statistics.median(b - a for a, b in zip(times, times[1:])) < 0.055
    assert not any(t.name.startswith("sampler-slow") for t in threading.enumerate())


class LaggedSensor:
    """A 1 s trailing-average power sensor (nvmlDeviceGetPowerUsage on Ampere+) seeing 50 W -> 300 W at t=0."""

    info = MeterInfo("lagged", ("x",), "GPU board", "integrated", 1.0)

    def __init__(self, clock) -> None:
        self.clock, self.integ = clock, PowerIntegrator()

    def read(self) -> MeterReading:
        t = self.clock()
        high_s = min(1.0, max(0.0, t))  # seconds of the last one at 300 W
        p = 300.0 * high_s + 50.0 * (1.0 - high_s)
        self.integ.add(t, p)
        return MeterReading(t, self.integ.energy_j, p)


def test_sensor_lag_confound_is_flagged_on_short_windows():
    # The seed note's confound: a run of 1.5 s reads low on a 1 s averaged sensor, by a bias that
    # grows as runs get shorter. The flag must be up exactly where that bias is large.
    clock = FakeClock(-2.0)
    sampler = Sampler(LaggedSensor(clock), rate_hz=10.0)
    for _ in range(160):
        sampler.tick()
        clock.advance(0.1)
    short = sampler.energy_between(0.0, 1.5)
    assert short.short_window and short.energy_j < 0.8 * 300.0 * 1.5
    long = sampler.energy_between(0.0, 12.0)
    assert not long.short_window and long.energy_j == pytest.approx(300.0 * 12.0, rel=0.05)
