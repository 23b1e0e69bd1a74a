"""AMD GPUs: the `amdsmi` energy counter (checked once against power × time), else power, else hwmon."""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from collectors.errors import MeterUnavailable
from collectors.meters.accumulate import CounterTracker, PowerIntegrator
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.plausible import DEFAULT_BOUND_W

DEFAULT_HWMON_ROOT = "/sys/class/drm"
_NA = 0xFFFF  # amdsmi's "not available" sentinel, when it is not the string "N/A"
# Instantaneous first: averaged power lags load changes (the sensor-lag confound).
_POWER_KEYS = ("current_socket_power", "socket_power", "average_socket_power")
_FIX = (
    "install ROCm 6.3 or newer and `pip install amdsmi`, or check that the amdgpu driver is loaded; "
    "or pick another meter: --meter nvml, rapl or estimate"
)


def _read(path: Path) -> str:
    return path.read_text()


class _Device:
    """One GPU: a way to read joules or watts, and its running totals."""

    def __init__(
        self,
        name: str,
        energy_uj: Callable[[], float] | None,
        power_w: Callable[[], float | None],
        errors: tuple[type[BaseException], ...] = (OSError, ValueError),
    ) -> None:
        self.name, self.energy_uj, self.power_fn, self.errors = name, energy_uj, power_w, errors
        # µJ per second a GPU can count: a drop implying more is a counter that ran back, not a reset
        self.counter, self.integ = CounterTracker(max_rate=DEFAULT_BOUND_W * 1e6), PowerIntegrator()
        self.limit_w: float | None = None
        self.period_s = 1.0
        self.power_w: float | None = None
        self.note = ""

    @property
    def energy_j(self) -> float:
        return self.counter.total / 1e6 if self.energy_uj else self.integ.energy_j

    def tick(self, t_s: float) -> bool:
        """Read once; False when the device gave nothing (runtime suspend, busy): a missing sample."""
        self.counter.fault = None
        try:
            self.power_w = self.power_fn()
        except self.errors:
            self.power_w = None
        if self.energy_uj is not None:
            try:
                self.counter.delta(self.energy_uj(), t_s)  # 64-bit accumulator: a decrease is a reset
            except self.errors:
                return False
            return True
        if self.power_w is None:
            return False
        self.integ.add(t_s, self.power_w)
        return True


Clock = Callable[[], float]
Sleep = Callable[[float], None]


def _smi_devices(
    smi: ModuleType, indices: Sequence[int] | None, validate_s: float, clock: Clock, sleep: Sleep
) -> list[_Device]:
    errors = (OSError, ValueError, KeyError, getattr(smi, "AmdSmiException", OSError))
    smi.amdsmi_init()
    handles = list(smi.amdsmi_get_processor_handles())
    if not handles:
        raise MeterUnavailable("amdsmi sees no AMD GPU", _FIX)
    chosen = range(len(handles)) if indices is None else indices
    for i in chosen:
        if not 0 <= i < len(handles):
            raise MeterUnavailable(
                f"no AMD GPU with index {i} (amdsmi sees {len(handles)})", "e.g. --meter amd:0"
            )
    devices = [_smi_device(smi, i, handles[i], errors) for i in chosen]
    _validate(devices, validate_s, clock, sleep)
    return devices


def _smi_device(smi: ModuleType, i: int, h: Any, errors: tuple[type[BaseException], ...]) -> _Device:
    name = _optional(lambda: smi.amdsmi_get_gpu_asic_info(h)["market_name"]) or "AMD GPU"

    def energy() -> float:
        d = smi.amdsmi_get_energy_count(h)
        ticks = d.get("energy_accumulator", d.get("power"))  # the key was 'power' before 6.2.1
        return float(ticks) * float(d["counter_resolution"])  # resolution is in µJ

    def power() -> float | None:
        info = smi.amdsmi_get_power_info(h)
        for key in _POWER_KEYS:
            v = info.get(key)
            if isinstance(v, (int, float)) and v != _NA:
                return float(v)
        return None

    has_counter = _optional(energy) is not None
    dev = _Device(f"{name} #{i}", energy if has_counter else None, power, errors)
    cap = _optional(lambda: smi.amdsmi_get_power_cap_info(h)["power_cap"])
    dev.limit_w = cap / 1e6 if isinstance(cap, (int, float)) else None  # µW
    return dev


def _optional(fn: Callable[[], Any] | None) -> Any:
    """`fn()`, or None when it fails or there is no `fn`."""
    if fn is None:
        return None
    try:
        return fn()
    except Exception:  # amdsmi raises its own classes and KeyError/TypeError for missing fields
        return None


def _validate(devices: list[_Device], wait_s: float, clock: Clock, sleep: Sleep) -> None:
    """Zeus's rule: trust the counter only if 0.1 < counter J / (power × Δt) < 10 (ROCm/amdsmi#38)."""
    counted = [d for d in devices if d.energy_uj is not None]
    if not counted:
        for d in devices:
            d.note, d.period_s = "socket power (whole watts) integrated", 1.0
        return
    t0, e0 = clock(), [_optional(d.energy_uj) for d in counted]
    p0 = [_optional(d.power_fn) for d in counted]
    sleep(wait_s)
    t1, e1 = clock(), [_optional(d.energy_uj) for d in counted]
    p1 = [_optional(d.power_fn) for d in counted]
    for d, a, b, pa, pb in zip(counted, e0, e1, p0, p1):
        if a is None or b is None or pa is None or pb is None or t1 <= t0:
            d.note, d.period_s = "energy counter (not validated: power unreadable)", 0.1
            continue
        expected_j = 0.5 * (pa + pb) * (t1 - t0)
        ratio = (b - a) / 1e6 / expected_j if expected_j > 0 else float("inf")
        if 0.1 < ratio < 10:
            d.note, d.period_s = f"energy counter (checked against power: ratio {ratio:.2f})", 0.1
        else:
            d.energy_uj = None
            d.note, d.period_s = f"socket power integrated (energy counter off by {ratio:.3g}x)", 1.0
    for d in devices:
        if d.energy_uj is None and not d.note:
            d.note, d.period_s = "socket power (whole watts) integrated", 1.0


def _read_stripped(read_text: Callable[[Path], str], path: Path) -> str:
    return read_text(path).strip()


def _read_int(read_text: Callable[[Path], str], path: Path) -> int:
    return int(read_text(path))


def _hwmon_devices(root: str | Path, read_text: Callable[[Path], str]) -> list[_Device]:
    """amdgpu hwmon: power1_input (Linux 6.6+, instantaneous), else power1_average, both µW."""
    devices = []
    for card in sorted(Path(root).glob("card*")):
        if not re.fullmatch(r"card\d+", card.name):
            continue  # card0-DP-1 and friends are connectors
        for hw in sorted((card / "device" / "hwmon").glob("hwmon*")):
            if _optional(partial(_read_stripped, read_text, hw / "name")) != "amdgpu":
                continue
            for fname, period_s in (("power1_input", 0.1), ("power1_average", 1.0)):
                if _optional(partial(_read_int, read_text, hw / fname)) is None:
                    continue

                def power(path: Path = hw / fname) -> float:
                    return int(read_text(path).strip()) / 1e6

                product = _optional(partial(_read_stripped, read_text, card / "device" / "product_name"))
                dev = _Device(f"{product or 'AMD GPU'} ({card.name})", None, power)
                cap = _optional(partial(_read_int, read_text, hw / "power1_cap"))
                dev.limit_w = cap / 1e6 if cap else None
                dev.note, dev.period_s = f"hwmon {fname} integrated", period_s
                devices.append(dev)
                break
    return devices


class AmdMeter:
    """Sum of AMD GPUs: amdsmi when importable and working, else the amdgpu hwmon files."""

    def __init__(
        self,
        indices: Sequence[int] | None = None,
        *,
        amdsmi: ModuleType | None = None,
        hwmon_root: str | Path = DEFAULT_HWMON_ROOT,
        validate_s: float = 0.5,
        read_text: Callable[[Path], str] = _read,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock, self._smi = clock, None
        problems: list[str] = []
        devices: list[_Device] = []
        via = "amdsmi"
        try:
            smi = amdsmi if amdsmi is not None else importlib.import_module("amdsmi")  # optional, lazy
        except ImportError:
            smi = None
            problems.append("amdsmi is not installed")
        if smi is not None:
            smi_error = getattr(smi, "AmdSmiException", OSError)
            try:
                devices = _smi_devices(smi, indices, validate_s, clock, sleep)
                self._smi = smi
            except (smi_error, MeterUnavailable) as exc:
                _optional(smi.amdsmi_shut_down)
                if isinstance(exc, MeterUnavailable) and "index" in exc.what:
                    raise
                problems.append(exc.what if isinstance(exc, MeterUnavailable) else f"amdsmi failed: {exc}")
        if not devices:
            via = "hwmon"
            devices = _hwmon_devices(hwmon_root, read_text)
            if indices is not None and devices:
                bad = [i for i in indices if not 0 <= i < len(devices)]
                if bad:
                    raise MeterUnavailable(
                        f"no AMD GPU with index {bad[0]} (hwmon sees {len(devices)})", _FIX
                    )
                devices = [devices[i] for i in indices]
        if not devices:
            problems.append(f"no amdgpu hwmon power file under {hwmon_root}")
            raise MeterUnavailable("no AMD GPU found: " + "; ".join(problems), _FIX)
        self._devices = devices
        limits = [d.limit_w for d in devices]
        self.info = MeterInfo(
            name="amd",
            devices=tuple(d.name for d in devices),
            boundary="GPU socket (on APUs this includes the CPU)",
            method="counter" if all(d.energy_uj for d in devices) else "integrated",
            update_period_s=max(d.period_s for d in devices),
            power_limit_w=sum(limits) if None not in limits else None,  # type: ignore[arg-type]
            detail=f"{via}: " + "; ".join(f"{d.name}: {d.note}" for d in devices),
            notes=tuple(problems) if via == "hwmon" else (),
        )

    def read(self) -> MeterReading:
        t0 = self._clock()
        ok = [d.tick(t0) for d in self._devices]
        t_s = 0.5 * (t0 + self._clock())
        if not any(ok):
            raise MeterUnavailable("no AMD GPU answered this tick", "the GPU may be in runtime suspend")
        powers = [d.power_w for d in self._devices]
        power_w = sum(p for p in powers if p is not None) if None not in powers else None
        faults = [f"{d.name}: {d.counter.fault} µJ" for d in self._devices if d.energy_uj and d.counter.fault]
        return MeterReading(
            t_s=t_s,
            energy_j=sum(d.energy_j for d in self._devices),
            power_w=power_w,
            fault="; ".join(faults) or None,
        )

    def close(self) -> None:
        if self._smi is not None:
            _optional(self._smi.amdsmi_shut_down)
            self._smi = None
