"""AMD meter: amdsmi counter checked against power × Δt, power fallback, hwmon fallback."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters.amd import AmdMeter
from tests.support.fake_amdsmi import FakeAmdGpu, make_amdsmi
from tests.support.meter_fakes import FakeClock


def open_amd(gpus, tmp_path, **kw):
    clock = FakeClock()

    def sleep(dt_s):  # time passes for the validation reads, and the GPUs keep drawing power
        clock.advance(dt_s)
        for g in gpus:
            g.advance(dt_s)

    smi = make_amdsmi(gpus, **{k: kw.pop(k) for k in ("init_status",) if k in kw})
    meter = AmdMeter(amdsmi=smi, hwmon_root=tmp_path / "drm", clock=clock, sleep=sleep, **kw)
    return meter, clock, smi


def run(meter, clock, gpus, watts, steps=10, dt=0.1):
    for g in gpus:
        g.power_w = watts
    meter.read()
    start = meter.read().energy_j
    for _ in range(steps):
        clock.advance(dt)
        for g in gpus:
            g.advance(dt, watts)
        last = meter.read()
    return last.energy_j - start


def test_sane_counter_is_used(tmp_path):
    gpus = [FakeAmdGpu(), FakeAmdGpu(legacy_key=True)]
    meter, clock, smi = open_amd(gpus, tmp_path)
    info = meter.info
    assert info.method == "counter" and info.name == "amd"
    assert "ratio 1.00" in info.detail and info.update_period_s == 0.1
    assert info.devices == ("AMD Instinct MI300X #0", "AMD Instinct MI300X #1")
    assert info.power_limit_w == pytest.approx(1500.0)  # µW caps
    assert run(meter, clock, gpus, 400) == pytest.approx(2 * 400 * 1.0, rel=1e-4)  # ticks × 15.259 µJ
    meter.close()
    assert smi.init_count() == 0


def test_bogus_counter_falls_back_to_power(tmp_path):
    gpus = [FakeAmdGpu(counter_scale=1000.0, current_power_na=True)]
    meter, clock, _ = open_amd(gpus, tmp_path)
    assert meter.info.method == "integrated" and "off by 1e+03x" in meter.info.detail
    assert meter.info.update_period_s == 1.0
    assert run(meter, clock, gpus, 250) == pytest.approx(250 * 1.0)


def test_unsupported_counter_uses_power(tmp_path):
    gpus = [FakeAmdGpu(counter_supported=False)]
    meter, clock, _ = open_amd(gpus, tmp_path, indices=[0])
    assert meter.info.method == "integrated" and "socket power" in meter.info.detail
    assert run(meter, clock, gpus, 123) == pytest.approx(123 * 1.0)


def hwmon(root: Path, card: str, files: dict[str, str], hw: str = "hwmon3") -> Path:
    d = root / card / "device" / "hwmon" / hw
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text + "\n")
    return d


@pytest.fixture
def drm(tmp_path):
    root = tmp_path / "drm"
    hwmon(root, "card0", {"name": "amdgpu", "power1_average": "45000000", "power1_cap": "220000000"})
    hwmon(
        root, "card1", {"name": "amdgpu", "power1_input": "12500000", "power1_average": "99000000"}, "hwmon5"
    )
    hwmon(root, "card2", {"name": "nouveau", "power1_input": "30000000"}, "hwmon7")  # not AMD
    (root / "card0-DP-1").mkdir()  # a connector, no hwmon
    return root


def test_hwmon_fallback_when_amdsmi_is_missing(drm, monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # import amdsmi -> ImportError
    clock = FakeClock()
    meter = AmdMeter(hwmon_root=drm, clock=clock)
    info = meter.info
    assert info.devices == ("AMD GPU (card0)", "AMD GPU (card1)")
    assert "power1_average" in info.detail and "power1_input" in info.detail  # input preferred
    assert info.update_period_s == 1.0 and info.method == "integrated"
    assert "amdsmi is not installed" in info.notes
    meter.read()
    clock.advance(2.0)
    r = meter.read()
    assert r.power_w == pytest.approx(57.5)  # 45 W + 12.5 W, from µW
    assert r.energy_j == pytest.approx(57.5 * 2.0)


def test_hwmon_suspended_gpu_is_a_missing_sample_not_zero(drm):
    fail = {"on": False}

    def read_text(path: Path) -> str:
        if fail["on"] and path.name.startswith("power1_"):
            raise OSError(errno.ENODATA, "No data available")  # runtime suspend
        return path.read_text()

    clock = FakeClock()
    meter = AmdMeter(amdsmi=make_amdsmi([], init_status=8), hwmon_root=drm, read_text=read_text, clock=clock)
    assert any("amdsmi failed" in n for n in meter.info.notes)
    meter.read()
    fail["on"] = True
    clock.advance(1.0)
    with pytest.raises(MeterUnavailable, match="no AMD GPU answered"):
        meter.read()
    fail["on"] = False
    clock.advance(1.0)
    assert meter.read().energy_j == pytest.approx(57.5 * 2.0)  # the gap bridged, not counted as 0 W


def test_nothing_amd_here(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    with pytest.raises(MeterUnavailable) as info:
        AmdMeter(hwmon_root=tmp_path / "drm")
    assert "amdsmi is not installed" in info.value.what and "no amdgpu hwmon" in info.value.what
    assert "pip install amdsmi" in info.value.fix


def test_bad_index(tmp_path):
    with pytest.raises(MeterUnavailable, match="index 3"):
        open_amd([FakeAmdGpu()], tmp_path, indices=[3])


def test_counter_keeps_counting_when_power_reads_fail(tmp_path):
    gpus = [FakeAmdGpu()]
    meter, clock, smi = open_amd(gpus, tmp_path)
    meter.read()

    def broken(h):
        raise smi.AmdSmiLibraryException(2)

    smi.amdsmi_get_power_info = broken
    clock.advance(1.0)
    gpus[0].advance(1.0, 200)
    r = meter.read()
    assert r.power_w is None and r.energy_j == pytest.approx(200.0, rel=1e-4)
