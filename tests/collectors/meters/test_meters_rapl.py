"""RAPL meter against a fake powercap tree: packages and DRAM counted, subzones/psys/mmio not, wraps."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters.rapl import RaplMeter, find_zones
from tests.support.meter_fakes import FakeClock

MAX_UJ = 262143328850  # a real client-part max_energy_range_uj (2^32 × 61.035 µJ)


def zone(root: Path, dirname: str, name: str, energy_uj: int, max_uj: int = MAX_UJ) -> Path:
    d = root / dirname
    d.mkdir(parents=True)
    (d / "name").write_text(name + "\n")
    (d / "energy_uj").write_text(f"{energy_uj}\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return d


def set_uj(d: Path, value: int) -> None:
    (d / "energy_uj").write_text(f"{value}\n")


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "powercap"
    (root / "intel-rapl").mkdir(parents=True)  # the control type directory, not a zone
    (root / "intel-rapl" / "enabled").write_text("1\n")
    zones = {
        "pkg0": zone(root, "intel-rapl:0", "package-0", 5_000_000),
        "core": zone(root, "intel-rapl:0:0", "core", 3_000_000),
        "uncore": zone(root, "intel-rapl:0:1", "uncore", 100_000),
        "dram": zone(root, "intel-rapl:0:2", "dram", 7_000_000, max_uj=65_712_999_613),
        "psys": zone(root, "intel-rapl:1", "psys", 9_000_000),
        "mmio": zone(root, "intel-rapl-mmio:0", "package-0", 5_000_000),
    }
    return root, zones


def test_only_package_and_dram_zones_are_used(tree):
    root, _ = tree
    assert [(z.path.name, z.name) for z in find_zones(root)] == [
        ("intel-rapl:0", "package-0"),
        ("intel-rapl:0:2", "dram"),
    ]


def test_no_double_counting(tree):
    root, z = tree
    clock = FakeClock()
    meter = RaplMeter(root, clock=clock)
    assert meter.read().energy_j == 0.0
    for name, add_uj in {
        "pkg0": 40_000_000,
        "core": 30_000_000,
        "uncore": 1_000_000,
        "dram": 6_000_000,
        "psys": 90_000_000,
        "mmio": 40_000_000,
    }.items():
        set_uj(z[name], int((z[name] / "energy_uj").read_text()) + add_uj)
    clock.advance(0.5)
    r = meter.read()
    assert r.energy_j == pytest.approx(46.0)  # package 40 J + dram 6 J; nothing else
    assert r.power_w == pytest.approx(92.0)
    info = meter.info
    assert info.name == "rapl" and info.method == "counter"
    assert info.boundary == "CPU package + DRAM"
    assert info.devices == ("CPU package-0",)
    assert "intel-rapl:0:2" in info.detail


def test_wrap_at_max_energy_range(tree):
    root, z = tree
    set_uj(z["pkg0"], MAX_UJ - 2_000_000)
    clock = FakeClock()
    meter = RaplMeter(root, include_dram=False, clock=clock)
    meter.read()
    set_uj(z["pkg0"], 3_000_000)  # wrapped past the range: 2 J before the wrap, 3 J after
    clock.advance(0.1)
    assert meter.read().energy_j == pytest.approx(5.0)
    assert meter.wraps == 1
    assert meter.info.boundary == "CPU package"


def test_two_sockets_add_up(tmp_path):
    a = zone(tmp_path, "intel-rapl:0", "package-0", 0)
    b = zone(tmp_path, "intel-rapl:1", "package-1", 0)
    meter = RaplMeter(tmp_path, clock=FakeClock())
    set_uj(a, 1_000_000)
    set_uj(b, 2_500_000)
    assert meter.read().energy_j == pytest.approx(3.5)
    assert meter.info.devices == ("CPU package-0", "CPU package-1")


def test_root_only_counter_gives_the_exact_fix(tree):
    root, _ = tree

    def read_text(path: Path) -> str:
        # Running as root here, so chmod would not stop us: simulate the kernel's 0400 mode instead.
        if path.name == "energy_uj":
            raise PermissionError(13, "Permission denied", str(path))
        return path.read_text()

    with pytest.raises(MeterUnavailable) as info:
        RaplMeter(root, read_text=read_text)
    err = info.value
    assert "root only" in err.what and "intel-rapl:0/energy_uj" in err.what
    assert "sudo" in err.fix
    assert f"chmod a+r {root}/intel-rapl:*/energy_uj" in err.fix
    assert "/etc/sysfs.conf" in err.fix and "CVE-2020-8694" in err.fix


def test_missing_powercap_says_so(tmp_path):
    with pytest.raises(MeterUnavailable, match="no RAPL powercap interface") as info:
        RaplMeter(tmp_path / "nothing")
    assert "intel_rapl_msr" in info.value.fix
    zone(tmp_path, "intel-rapl:1", "psys", 0)  # psys alone is not a package
    with pytest.raises(MeterUnavailable, match="no RAPL package zone"):
        RaplMeter(tmp_path)


def test_read_failure_is_a_failed_tick(tree):
    root, z = tree
    meter = RaplMeter(root, clock=FakeClock())
    (z["pkg0"] / "energy_uj").write_text("garbage\n")
    with pytest.raises(MeterUnavailable, match="RAPL read failed"):
        meter.read()
