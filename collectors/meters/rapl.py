"""CPU energy from Linux RAPL through powercap sysfs: package zones, plus DRAM where it exists."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import MeterUnavailable
from collectors.meters.accumulate import CounterTracker
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.plausible import DEFAULT_BOUND_W

DEFAULT_ROOT = "/sys/class/powercap"
UPDATE_PERIOD_S = 0.001  # the MSR behind energy_uj updates about every millisecond
# Top-level zones have one colon (intel-rapl:0), subzones two (intel-rapl:0:0). The pattern leaves
# out intel-rapl-mmio:*, the MMIO power-limit interface to the same package, which must not be added.
_ZONE = re.compile(r"^intel-rapl:(\d+)(?::(\d+))?$")

_NOT_THERE_FIX = (
    "RAPL needs Linux on an Intel CPU or AMD Zen (kernel 5.11 or newer) with the intel_rapl_msr module "
    "(sudo modprobe intel_rapl_msr); in a container mount /sys/class/powercap; VMs usually hide it"
)


def permission_fix(root: str | Path) -> str:
    """The exact fix for the root-only energy_uj files, and the risk of applying it."""
    return (
        f"run spectop as root (sudo), or let users read the counters with "
        f"`sudo chmod a+r {root}/intel-rapl:*/energy_uj` (until reboot; the line "
        f"`mode class/powercap/intel-rapl:0/energy_uj = 0444` in /etc/sysfs.conf makes it last). "
        f"That re-opens the PLATYPUS power side channel (CVE-2020-8694) to every local user"
    )


def _read(path: Path) -> str:
    return path.read_text()


@dataclass(frozen=True, slots=True)
class RaplZone:
    """One counter we add up: a package, or a DRAM domain (separate from the package's energy)."""

    path: Path
    name: str  # "package-0", "dram"
    max_energy_range_uj: int


def find_zones(root: str | Path, read_text: Callable[[Path], str] = _read) -> list[RaplZone]:
    """Package zones (one colon, name starts with `package`) and DRAM zones; never core/uncore/psys.

    Subzones core and uncore are parts of the package, and psys covers the platform including the
    package, so adding any of them would count the same joules twice.
    """
    base = Path(root)
    if not base.is_dir():
        return []
    zones = []
    for entry in sorted(base.iterdir(), key=lambda p: p.name):
        m = _ZONE.match(entry.name)
        if not m:
            continue
        try:
            name = read_text(entry / "name").strip()
            max_uj = int(read_text(entry / "max_energy_range_uj").strip())
        except (OSError, ValueError):
            continue
        top_level = m.group(2) is None
        if (top_level and name.startswith("package")) or name == "dram":
            zones.append(RaplZone(entry, name, max_uj))
    return zones


class RaplMeter:
    """Sum of the RAPL package (and DRAM) counters, each unwrapped at its `max_energy_range_uj`."""

    reads_at_once = True  # a few sysfs files: a mark reads them on the caller's thread (sampler.py)

    def __init__(
        self,
        root: str | Path = DEFAULT_ROOT,
        *,
        include_dram: bool = True,
        read_text: Callable[[Path], str] = _read,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root, self._read_text, self._clock = Path(root), read_text, clock
        zones = [z for z in find_zones(root, read_text) if include_dram or z.name != "dram"]
        if not any(z.name.startswith("package") for z in zones):
            where = "no RAPL powercap interface" if not self._root.is_dir() else "no RAPL package zone"
            raise MeterUnavailable(f"{where} under {root}", _NOT_THERE_FIX)
        self._zones = zones
        # µJ per second a zone can count: a wrap implying more is a counter that ran back
        max_rate = DEFAULT_BOUND_W * 1e6
        self._trackers = [CounterTracker(wrap_at=z.max_energy_range_uj, max_rate=max_rate) for z in zones]
        for zone, tracker in zip(zones, self._trackers):
            try:
                tracker.rebase(self._read_uj(zone))
            except PermissionError as exc:
                raise MeterUnavailable(
                    f"RAPL energy counters are readable by root only: cannot read {zone.path / 'energy_uj'}",
                    permission_fix(root),
                ) from exc
            except (OSError, ValueError) as exc:
                raise MeterUnavailable(
                    f"cannot read {zone.path / 'energy_uj'}: {exc}", _NOT_THERE_FIX
                ) from exc
        self._last: MeterReading | None = None
        has_dram = any(z.name == "dram" for z in zones)
        self.info = MeterInfo(
            name="rapl",
            devices=tuple(f"CPU {z.name}" for z in zones if z.name != "dram"),
            boundary="CPU package + DRAM" if has_dram else "CPU package",
            method="counter",
            update_period_s=UPDATE_PERIOD_S,
            detail=", ".join(f"{z.name} ({z.path.name})" for z in zones),
            notes=("excludes VRM/PSU losses, fans, disks and NICs",),
        )

    def _read_uj(self, zone: RaplZone) -> int:
        return int(self._read_text(zone.path / "energy_uj").strip())

    def read(self) -> MeterReading:
        t0 = self._clock()
        try:
            raws = [self._read_uj(z) for z in self._zones]
        except (OSError, ValueError) as exc:
            raise MeterUnavailable(f"RAPL read failed: {exc}", "check the powercap sysfs files") from exc
        t_s = 0.5 * (t0 + self._clock())
        faults = []
        for zone, tracker, raw in zip(self._zones, self._trackers, raws):
            tracker.delta(raw, t_s)
            if tracker.fault:
                faults.append(f"{zone.name}: {tracker.fault} µJ")
        energy_j = sum(t.total for t in self._trackers) / 1e6
        power_w = None
        last = self._last
        if last is not None and t_s > last.t_s:
            power_w = (energy_j - last.energy_j) / (t_s - last.t_s)  # RAPL has no power file
        self._last = MeterReading(
            t_s=t_s, energy_j=energy_j, power_w=power_w, fault="; ".join(faults) or None
        )
        return self._last

    @property
    def wraps(self) -> int:
        return sum(t.wraps for t in self._trackers)

    def close(self) -> None:
        """Nothing to release: each read opens and closes its files."""
