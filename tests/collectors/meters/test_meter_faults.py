"""Broken meters are caught where their readings come in: counters that run back are not resets, a
NaN is no reading, and a window the meter got wrong says how (collectors/meters/plausible.py).

Expected values are worked by hand from the readings each test feeds in.
"""

from __future__ import annotations

import math

import httpx
import pytest

from collectors.meters import plausible
from collectors.meters.accumulate import CounterTracker
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.exporters import ExporterMeter
from tests.support.fake_exporters import DcgmExporter, DcgmGpu
from tests.support.faulty_meters import fed
from tests.support.meter_fakes import FakeClock


def test_a_reset_is_a_drop_towards_zero_that_fits_the_time_since():
    t = CounterTracker(max_rate=3000.0)  # J/s: one GPU at most
    assert t.delta(1_000_000.0, 0.0) == 0.0
    assert t.delta(1_000_300.0, 1.0) == 300.0
    assert t.delta(120.0, 2.0) == 120.0  # driver reload: 120 J since the restart, at most 3000 J in 1 s
    assert t.delta(420.0, 3.0) == 300.0
    assert (t.total, t.resets, t.backwards, t.fault) == (720.0, 1, 0, None)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (1_000_000.0, 990_000.0),  # ran back 1 %: as a "reset" it would add 990 kJ in one second
        (1_000.0, 900.0),  # a young counter: the drop fits the time, but 900 J is not a restart from 0
        (1_000_000.0, 400_000.0),  # towards zero, but 400 kJ in one second is 400 kW
    ],
)
def test_a_counter_that_runs_back_counts_nothing_and_says_so(before, after):
    t = CounterTracker(max_rate=3000.0)
    t.delta(before, 0.0)
    assert t.delta(after, 1.0) == 0.0
    assert t.backwards == 1 and t.resets == 0 and t.fault == f"from {before:g} to {after:g}"
    assert t.delta(after + 300.0, 2.0) == 300.0  # counts on from the new value
    assert t.fault is None and t.total == 300.0


def test_a_wrap_is_believed_only_when_it_fits_the_time_since():
    t = CounterTracker(wrap_at=1000.0, max_rate=100.0)
    t.delta(950.0, 0.0)
    assert t.delta(30.0, 1.0) == 80.0 and t.wraps == 1  # 1000 - 950 + 30
    assert t.delta(20.0, 2.0) == 0.0 and t.backwards == 1  # a "wrap" of 990 in 1 s at most 100/s


def test_without_a_bound_a_decrease_stays_a_reset():
    t = CounterTracker()  # nothing known of the device: Prometheus's rule
    t.delta(1_000_000.0)
    assert t.delta(990_000.0) == 990_000.0 and t.resets == 1


def test_a_dcgm_counter_that_runs_back_adds_nothing_and_marks_the_reading():
    gpu = DcgmGpu(0, "GPU-aaaa")
    clock = FakeClock()
    exporter = DcgmExporter([gpu])
    client = httpx.Client(transport=httpx.MockTransport(exporter.handler))
    meter = ExporterMeter("http://gpu-box:9400/metrics", "dcgm", client=client, clock=clock)
    meter.read()
    clock.advance(1.0)
    gpu.advance(1.0, 300.0)
    before = meter.read()
    assert before.fault is None
    clock.advance(1.0)
    gpu.energy_mj -= 50_000_000  # back 50 kJ: read as a reset this added ~987 MJ
    back = meter.read()
    assert back.energy_j == before.energy_j and "from" in back.fault
    clock.advance(1.0)
    gpu.advance(1.0, 300.0)
    assert meter.read().energy_j == pytest.approx(before.energy_j + 300.0)


def test_a_reading_that_is_not_a_number_is_a_failed_read():
    s = fed(
        MeterReading(1.0, 10.0),
        MeterReading(2.0, math.nan),
        MeterReading(3.0, math.inf),
        MeterReading(4.0, 30.0),
    )
    assert [r.energy_j for r in s.readings()] == [10.0, 30.0]
    assert s.failed_ticks == 2 and "not a number" in s.last_error
    assert s.energy_between(1.0, 4.0).energy_j == 20.0  # no NaN reaches a window


def test_a_power_that_is_not_finite_or_is_negative_is_dropped():
    s = fed(MeterReading(1.0, 1.0, math.nan), MeterReading(2.0, 2.0, -5.0), MeterReading(3.0, 3.0, 7.0))
    assert [r.power_w for r in s.readings()] == [None, None, 7.0]


def test_a_held_decrease_and_a_meter_fault_mark_the_windows_they_fall_in():
    s = fed(
        MeterReading(0.0, 100.0),
        MeterReading(1.0, 200.0),
        MeterReading(2.0, 150.0),  # ran back 50 J: held level at 200
        MeterReading(3.0, 250.0),
        MeterReading(4.0, 350.0, fault="GPU 0: from 9 to 8 mJ"),
        MeterReading(5.0, 450.0),
    )
    held = s.readings()[2]
    assert held.energy_j == 200.0 and "held level at 200 J, read 150 J" in held.fault
    window = s.energy_between(1.5, 2.5)
    assert window.energy_j == pytest.approx(
        50.0
    )  # 200 -> 250 over 2..3, half of it: the drop's stretch is lost
    assert [p.code for p in window.problems(work_ran=True)] == ["meter-backwards"]
    assert s.energy_between(3.5, 4.5).faults == ("GPU 0: from 9 to 8 mJ",)
    assert s.energy_between(4.5, 5.0).problems(work_ran=True) == []


def test_a_counter_that_stands_still_while_work_runs_is_stale():
    readings = [MeterReading(t / 10, 100.0 + min(t, 10) * 20.0) for t in range(31)]  # stops at t=1 s
    s = fed(*readings)
    busy = s.energy_between(0.5, 3.0)
    assert busy.unchanged_s == pytest.approx(2.0)  # 1.0 .. 3.0
    assert [p.code for p in busy.problems(work_ran=True)] == ["meter-stale"]
    assert "did not change for 2.0 s" in busy.problems(work_ran=True)[0].message
    assert busy.problems(work_ran=False) == []  # idle and moving at first: not stale
    still = s.energy_between(1.5, 1.8)  # 0 J while the server worked: no device draws 0 W
    assert [p.message for p in still.problems(work_ran=True)] == [
        "the meter counted 0 J while the server worked: it is stuck or not counting"
    ]
    assert s.energy_between(0.0, 0.9).problems(work_ran=True) == []


def test_an_integrated_meter_is_stale_when_its_power_reading_stands_still():
    power = [300.0 + (t % 3) for t in range(10)] + [305.0] * 20  # the sensor freezes at t=1 s
    energy = [sum(power[:t]) * 0.1 for t in range(30)]
    s = fed(*(MeterReading(t / 10, energy[t], power[t]) for t in range(30)), method="integrated")
    assert [p.code for p in s.energy_between(0.5, 2.8).problems(work_ran=True)] == ["meter-stale"]
    assert s.energy_between(0.0, 0.9).problems(work_ran=True) == []


def info(boundary: str, devices: int = 1, limit: float | None = None) -> MeterInfo:
    return MeterInfo("x", tuple(f"d{i}" for i in range(devices)), boundary, "counter", 0.1, limit)


def test_power_bounds_per_boundary_and_from_the_power_limit():
    assert plausible.power_bound_w(info("GPU board", limit=700.0)) == 1050.0
    assert plausible.power_bound_w(info("GPU board (remote)", devices=2)) == 4000.0
    assert plausible.power_bound_w(info("CPU package + DRAM")) == 1000.0
    assert plausible.power_bound_w(info("SoC (CPU+GPU+ANE)")) == 500.0
    assert plausible.power_bound_w(info("test")) == 3000.0


def test_a_window_beyond_what_the_devices_can_draw_is_implausible():
    gpu = info("GPU board")  # 2000 W, and 1 % more for one 0.1 s update period in 10 s
    ok = plausible.window_problems(20_200.0, 10.0, 0.0, (), gpu, work_ran=True)
    assert ok == []
    (too_much,) = plausible.window_problems(20_300.0, 10.0, 0.0, (), gpu, work_ran=True)
    assert too_much.code == "meter-implausible"
    assert "2,030 W" in too_much.message and "at most 2,000 W for GPU board" in too_much.message
    # a megajoule "reset" in one second
    assert (
        plausible.window_problems(987_654.0, 1.0, 0.0, (), gpu, work_ran=True)[0].code == "meter-implausible"
    )
