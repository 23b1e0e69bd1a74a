"""NVML meter against a fake pynvml with the real error classes, mJ counters and mW power."""

from __future__ import annotations

import sys
import types

import pynvml as real
import pytest

from collectors.errors import MeterUnavailable
from collectors.meters import nvml
from collectors.meters.nvml import NvmlMeter
from tests.support.fake_pynvml import (
    DRIVER_NOT_LOADED,
    ERROR_CODES,
    LIBRARY_NOT_FOUND,
    NO_PERMISSION,
    NOT_SUPPORTED,
    UNKNOWN,
    FakeGpu,
    class_name,
    make_pynvml,
)
from tests.support.meter_fakes import FakeClock

DT = 0.1


def two_gpus(**kw):
    return [
        FakeGpu(name="NVIDIA H200", uuid="GPU-aaaa", **kw),
        FakeGpu(name=b"NVIDIA H200", uuid="GPU-bbbb", limit_mw=600_000, **kw),
    ]


def open_meter(gpus, indices=None, **kw):
    clock = FakeClock()
    return NvmlMeter(indices, nvml=make_pynvml(gpus, **kw), clock=clock), clock


def step(clock, gpus, watts, dt=DT):
    clock.advance(dt)
    for gpu, w in zip(gpus, watts):
        gpu.advance(dt, w)


def test_fake_matches_the_real_bindings():
    # The fake is only worth something if its names and codes are the real ones.
    for err_name, code in ERROR_CODES.items():
        assert getattr(real, f"NVML_ERROR_{err_name}") == code
        cls = getattr(real, class_name(err_name))
        assert cls().value == code and isinstance(real.NVMLError(code), cls)
    fake = make_pynvml([])
    assert isinstance(fake.NVMLError(15), fake.NVMLError_GpuIsLost)
    assert fake.NVMLError_NotSupported().value == 3


def test_counter_sums_gpus_in_joules_and_describes_them():
    gpus = two_gpus()
    meter, clock = open_meter(gpus)
    assert meter.read().energy_j == 0.0  # cumulative since open, not since driver load
    for watts in ([300, 150], [310, 140], [500, 100]):
        step(clock, gpus, watts)
    r = meter.read()
    assert r.energy_j == pytest.approx((300 + 310 + 500 + 150 + 140 + 100) * DT, abs=0.003)
    assert r.power_w == pytest.approx(600.0)  # mW -> W, summed
    assert r.t_s == clock.t_s
    info = meter.info
    assert info.name == "nvml" and info.method == "counter" and info.boundary == "GPU board"
    assert info.devices == ("NVIDIA H200 #0", "NVIDIA H200 #1")  # bytes names decoded
    assert info.power_limit_w == pytest.approx(1300.0)
    assert info.update_period_s == nvml.COUNTER_PERIOD_S
    assert "570.86.15" in info.detail and "GPU-aaaa" in info.detail and "GPU-bbbb" in info.detail


def test_selected_indices_only():
    gpus = two_gpus()
    meter, clock = open_meter(gpus, indices=[1])
    meter.read()
    step(clock, gpus, [300, 100])
    assert meter.read().energy_j == pytest.approx(100 * DT, abs=0.002)
    assert meter.info.devices == ("NVIDIA H200 #1",)
    with pytest.raises(MeterUnavailable, match=r"index 2 \(NVML sees 2: 0..1\)"):
        open_meter(two_gpus(), indices=[2])


def test_no_counter_integrates_instant_power_exactly_for_a_ramp():
    gpu = FakeGpu(counter_error=NOT_SUPPORTED)
    meter, clock = open_meter([gpu])
    assert meter.info.method == "integrated"
    assert "NVML_FI_DEV_POWER_INSTANT" in meter.info.detail
    assert meter.info.update_period_s == nvml.COUNTER_PERIOD_S

    def power_w(t):
        return 100.0 + 50.0 * t  # trapezoid integration is exact for a linear ramp

    t_start = clock.t_s
    gpu.power_mw = power_w(0) * 1000
    meter.read()
    for _ in range(20):
        clock.advance(DT)
        gpu.power_mw = power_w(clock.t_s - t_start) * 1000
        r = meter.read()
    elapsed = clock.t_s - t_start
    assert r.energy_j == pytest.approx(100.0 * elapsed + 25.0 * elapsed**2, rel=1e-5)  # whole mW


@pytest.mark.parametrize(("arch", "period_s", "says"), [(9, 1.0, "1 s average"), (4, 0.1, "before Ampere")])
def test_power_usage_fallback_notes_the_average(arch, period_s, says):
    # The field call succeeds but the value carries NOT_SUPPORTED (driver older than R535).
    gpu = FakeGpu(arch=arch, counter_error=NOT_SUPPORTED, instant_error=NOT_SUPPORTED)
    meter, clock = open_meter([gpu])
    assert meter.info.update_period_s == period_s
    assert "nvmlDeviceGetPowerUsage" in meter.info.detail and says in meter.info.detail
    meter.read()
    step(clock, [gpu], [250])
    assert meter.read().energy_j == pytest.approx(0.5 * (100 + 250) * DT)


def test_counter_outage_is_bridged_then_reconciled():
    gpu = FakeGpu()
    meter, clock = open_meter([gpu])
    meter.read()
    true_start_mj = gpu.energy_mj
    for _ in range(3):
        step(clock, [gpu], [100])
        meter.read()
    gpu.counter_error = UNKNOWN
    seen = []
    for _ in range(5):
        step(clock, [gpu], [200])
        seen.append(meter.read().energy_j)
    assert all(b > a for a, b in zip(seen, seen[1:]))  # bridged by power, not frozen at zero
    assert any("unavailable" in w for w in meter.warnings)
    gpu.counter_error = None
    step(clock, [gpu], [200])
    r = meter.read()
    assert r.energy_j == pytest.approx((gpu.energy_mj - true_start_mj) / 1000, abs=0.002)


def test_bridge_over_estimate_is_carried_forward_not_subtracted():
    gpu = FakeGpu()
    meter, clock = open_meter([gpu])
    meter.read()
    start_mj = gpu.energy_mj
    gpu.counter_error = UNKNOWN
    for _ in range(5):
        step(clock, [gpu], [100])
        gpu.power_mw = 400_000  # the power reading says four times what the counter will show
        meter.read()
    gpu.counter_error = None
    readings = []
    for _ in range(30):
        step(clock, [gpu], [100])
        readings.append(meter.read().energy_j)
    assert all(b >= a for a, b in zip(readings, readings[1:]))
    assert readings[0] == readings[1]  # holding level while the excess is paid back
    assert readings[-1] == pytest.approx((gpu.energy_mj - start_mj) / 1000, abs=0.002)


def test_driver_reload_counter_drop_is_not_negative_energy():
    gpu = FakeGpu()
    meter, clock = open_meter([gpu])
    meter.read()
    step(clock, [gpu], [100])
    before = meter.read().energy_j
    clock.advance(DT)
    gpu.energy_mj, gpu.power_mw = 3_000.0, 100_000  # reloaded: counter restarted near 0
    after = meter.read().energy_j
    assert after == pytest.approx(before + 100 * DT)  # that interval bridged with power
    step(clock, [gpu], [100])
    assert meter.read().energy_j == pytest.approx(after + 100 * DT, abs=0.002)
    assert any("driver reload" in w for w in meter.warnings)


def test_lost_gpu_stops_counting_and_all_lost_raises():
    gpus = two_gpus()
    meter, clock = open_meter(gpus)
    meter.read()
    step(clock, gpus, [100, 100])
    meter.read()
    gpus[0].lost = True
    step(clock, gpus, [100, 100])
    r = meter.read()
    assert r.energy_j == pytest.approx(100 * DT + 2 * 100 * DT, abs=0.003)
    assert r.power_w == pytest.approx(100.0)
    assert any("fell off the bus" in w for w in meter.warnings)
    gpus[1].lost = True
    with pytest.raises(MeterUnavailable, match="GpuIsLost"):
        meter.read()


@pytest.mark.parametrize(
    ("code", "says", "fix"),
    [
        (LIBRARY_NOT_FOUND, "no NVIDIA driver", "install the NVIDIA driver"),
        (DRIVER_NOT_LOADED, "not loaded", "modprobe nvidia"),
        (NO_PERMISSION, "no permission", "/dev/nvidia"),
    ],
)
def test_init_errors_say_what_and_how_to_fix(code, says, fix):
    with pytest.raises(MeterUnavailable) as info:
        open_meter([FakeGpu()], init_error=code)
    assert says in info.value.what and fix in info.value.fix


def test_gpu_without_any_reading_is_skipped_and_none_left_raises():
    mute = FakeGpu(counter_error=NO_PERMISSION, instant_error=NOT_SUPPORTED, usage_error=NOT_SUPPORTED)
    meter, _ = open_meter([mute, FakeGpu(uuid="GPU-ok")])
    assert meter.info.devices == ("NVIDIA H200 #1",)
    assert any("neither energy nor power" in n for n in meter.info.notes)
    nv = make_pynvml([mute])
    with pytest.raises(MeterUnavailable, match="reports energy or power"):
        NvmlMeter(nvml=nv, clock=FakeClock())
    assert nv.init_count() == 0  # shut NVML down again on failure


def test_mig_is_labelled_and_close_shuts_down():
    nv = make_pynvml([FakeGpu(mig=True)])
    meter = NvmlMeter(nvml=nv, clock=FakeClock())
    assert any("includes other tenants" in n for n in meter.info.notes)
    assert nv.init_count() == 1
    meter.close()
    meter.close()
    assert nv.init_count() == 0


def test_unofficial_pynvml_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", types.ModuleType("pynvml"))
    with pytest.raises(MeterUnavailable, match="not NVIDIA's nvidia-ml-py") as info:
        nvml.load_pynvml()
    assert "pip install nvidia-ml-py" in info.value.fix
