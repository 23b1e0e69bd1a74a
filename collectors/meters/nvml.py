"""NVIDIA GPUs through NVML (`nvidia-ml-py`): the energy counter where it works, else integrated power."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, cast

from collectors.errors import MeterUnavailable
from collectors.meters.accumulate import PowerIntegrator
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.plausible import DEFAULT_BOUND_W

COUNTER_PERIOD_S = 0.1  # the energy counter and instant power move about every 100 ms
AVERAGE_PERIOD_S = 1.0  # nvmlDeviceGetPowerUsage is a trailing 1 s average on Ampere and newer
_ARCH_AMPERE = 7
_OTHER_METERS = "or pick another meter: --meter amd, rapl, macmon or estimate"


def load_pynvml() -> ModuleType:
    """Import NVIDIA's bindings, refusing the old unofficial `pynvml` copy (Zeus's check)."""
    try:
        import pynvml
    except ImportError as exc:
        raise MeterUnavailable("the NVML bindings are not installed", "pip install nvidia-ml-py") from exc
    if not hasattr(pynvml, "_nvmlGetFunctionPointer"):
        raise MeterUnavailable(
            "the installed 'pynvml' module is not NVIDIA's nvidia-ml-py",
            "pip uninstall pynvml && pip install nvidia-ml-py",
        )
    return cast(ModuleType, pynvml)


def _err(nv: ModuleType, name: str) -> type[BaseException]:
    # Older bindings lack some classes; a fresh subclass never matches, which is what we want then.
    return getattr(nv, f"NVMLError_{name}", type(name, (Exception,), {}))


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def init_error(nv: ModuleType, exc: BaseException) -> MeterUnavailable:
    """Say, in one line with a fix, why nvmlInit failed."""
    if isinstance(exc, _err(nv, "LibraryNotFound")):
        return MeterUnavailable(
            "no NVIDIA driver: libnvidia-ml.so.1 (NVML) not found",
            f"install the NVIDIA driver if this machine has an NVIDIA GPU, {_OTHER_METERS}",
        )
    if isinstance(exc, _err(nv, "DriverNotLoaded")):
        return MeterUnavailable(
            "the NVIDIA driver is not loaded",
            f"load it (sudo modprobe nvidia; `nvidia-smi` should work), {_OTHER_METERS}",
        )
    if isinstance(exc, _err(nv, "NoPermission")):
        return MeterUnavailable(
            "no permission to open the NVIDIA device nodes",
            "add your user to the group that owns /dev/nvidia* (often 'video'), or run as root",
        )
    if isinstance(exc, (_err(nv, "LibRmVersionMismatch"), _err(nv, "ResetRequired"))):
        return MeterUnavailable(f"NVML: {exc}", "the driver was upgraded underneath: reboot or reload it")
    return MeterUnavailable(f"NVML failed to start: {exc}", "check that `nvidia-smi` works")


class _Gpu:
    """One device's state: counter baseline, power integral, and the bridge over counter outages."""

    def __init__(self, nv: ModuleType, index: int) -> None:
        self.nv, self.index = nv, index
        self.handle = nv.nvmlDeviceGetHandleByIndex(index)
        self.name = _text(nv.nvmlDeviceGetName(self.handle))
        self.uuid = _text(nv.nvmlDeviceGetUUID(self.handle))
        self.limit_w = self._optional(lambda: nv.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1000.0)
        self.arch = self._optional(lambda: int(nv.nvmlDeviceGetArchitecture(self.handle)))
        mig = self._optional(lambda: nv.nvmlDeviceGetMigMode(self.handle))
        self.mig = bool(mig and mig[0] == getattr(nv, "NVML_DEVICE_MIG_ENABLE", 1))
        # Probe, don't decide by architecture: vGPUs and some Volta-era boards refuse the counter.
        raw = self._optional(lambda: nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        self.has_counter = raw is not None
        self.last_mj: float | None = raw
        self.power_kind, self._power = self._pick_power()
        self.integ = PowerIntegrator()
        self.energy_j = 0.0
        self.debt_j = 0.0  # bridged joules the counter has not yet confirmed
        self.power_w: float | None = None
        self.lost = False
        self.outages = 0
        self.resets = 0
        self.in_outage = False
        self.last_counter_t_s = float("-inf")
        self.fault: str | None = None  # the counter ran back in the last tick

    def _optional(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except self.nv.NVMLError as exc:
            if isinstance(exc, _err(self.nv, "GpuIsLost")):
                raise
            return None

    def _instant_mw(self) -> float:
        nv = self.nv
        v = nv.nvmlDeviceGetFieldValues(self.handle, [nv.NVML_FI_DEV_POWER_INSTANT])[0]
        # The call succeeds if any field was filled; each value carries its own return code.
        if v.nvmlReturn != nv.NVML_SUCCESS:
            raise nv.NVMLError(v.nvmlReturn)
        members = {
            nv.NVML_VALUE_TYPE_UNSIGNED_INT: "uiVal",
            nv.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: "ullVal",
            nv.NVML_VALUE_TYPE_DOUBLE: "dVal",
        }
        return float(getattr(v.value, members.get(v.valueType, "uiVal")))

    def _pick_power(self) -> tuple[str, Callable[[], float] | None]:
        nv = self.nv
        if hasattr(nv, "NVML_FI_DEV_POWER_INSTANT"):  # fields exist from the CUDA 12.2 (R535) header on
            mw = self._optional(self._instant_mw)
            if mw is not None and mw > 0:  # Zeus: a 0 here means the field is not really supported
                return "instant", self._instant_mw
        if self._optional(lambda: nv.nvmlDeviceGetPowerUsage(self.handle)) is not None:
            return "average", lambda: float(nv.nvmlDeviceGetPowerUsage(self.handle))
        return "none", None

    @property
    def update_period_s(self) -> float:
        if self.has_counter or self.power_kind == "instant":
            return COUNTER_PERIOD_S
        older = self.arch is not None and self.arch < _ARCH_AMPERE  # instantaneous before Ampere
        return COUNTER_PERIOD_S if older else AVERAGE_PERIOD_S

    @property
    def method_text(self) -> str:
        if self.has_counter:
            return "energy counter"
        if self.power_kind == "instant":
            return "instant power (NVML_FI_DEV_POWER_INSTANT) integrated"
        if self.update_period_s == AVERAGE_PERIOD_S:
            return "nvmlDeviceGetPowerUsage integrated (a 1 s average on Ampere and newer)"
        return "nvmlDeviceGetPowerUsage integrated (instantaneous before Ampere)"

    def tick(self, t_s: float) -> None:
        """Read this GPU once; GpuIsLost marks it lost, other errors skip the tick or bridge it."""
        self.fault = None
        if self.lost:
            return
        nv = self.nv
        try:
            self.power_w = self._power() / 1000.0 if self._power else None
        except (_err(nv, "NotSupported"), _err(nv, "NoPermission")):
            self._power, self.power_kind, self.power_w = None, "none", None
        except nv.NVMLError as exc:
            if isinstance(exc, _err(nv, "GpuIsLost")):
                self.lost, self.power_w = True, None
                return
            self.power_w = None  # transient (NotReady, Timeout, Unknown): skip this sample
        bridge_j = self.integ.add(t_s, self.power_w) if self.power_w is not None else 0.0
        if not self.has_counter:
            self.energy_j += bridge_j
            return
        try:
            raw = float(nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except nv.NVMLError as exc:
            if isinstance(exc, _err(nv, "GpuIsLost")):
                self.lost, self.power_w = True, None
                return
            # Counter outage: bridge with power now, reconcile when the counter returns (codecarbon).
            self.outages += not self.in_outage
            self.in_outage = True
            self.energy_j += bridge_j
            self.debt_j += bridge_j
            return
        self.in_outage = False
        prev, self.last_mj = self.last_mj, raw
        prev_t_s, self.last_counter_t_s = self.last_counter_t_s, t_s
        if prev is None:
            return
        if raw < prev:
            # a driver reload restarts it from 0 (baseline and debt gone); else it ran back: bridge, flag
            if raw < prev / 2 and raw / 1000.0 <= DEFAULT_BOUND_W * (t_s - prev_t_s):
                self.resets, self.debt_j = self.resets + 1, 0.0
                self.energy_j += bridge_j if self.power_w is not None else raw / 1000.0
            else:
                self.fault, self.energy_j = f"from {prev:g} to {raw:g} mJ", self.energy_j + bridge_j
            return
        inc = (raw - prev) / 1000.0 - self.debt_j
        self.debt_j = max(0.0, -inc)  # carry a bridge over-estimate forward instead of going back
        self.energy_j += max(0.0, inc)


class NvmlMeter:
    """Sum of the selected NVIDIA GPUs (all by default), in NVML index order, keyed by UUID."""

    def __init__(
        self,
        indices: Sequence[int] | None = None,
        *,
        nvml: ModuleType | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        nv = nvml if nvml is not None else load_pynvml()
        self._nv, self._clock = nv, clock
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise init_error(nv, exc) from exc
        try:
            self._gpus = self._open_gpus(indices)
        except BaseException:
            nv.nvmlShutdown()
            raise
        self._closed = False
        self.info = self._describe()

    def _open_gpus(self, indices: Sequence[int] | None) -> list[_Gpu]:
        nv = self._nv
        count = int(nv.nvmlDeviceGetCount())
        if count == 0:
            raise MeterUnavailable("NVML sees no NVIDIA GPU", "check `nvidia-smi -L`; " + _OTHER_METERS)
        chosen = list(range(count)) if indices is None else list(indices)
        bad = [i for i in chosen if not 0 <= i < count]
        if bad:
            raise MeterUnavailable(
                f"no NVIDIA GPU with index {bad[0]} (NVML sees {count}: 0..{count - 1})",
                "pick indices from `nvidia-smi -L`, e.g. --meter nvml:0",
            )
        gpus, self.skipped = [], []
        for i in chosen:
            try:
                gpu = _Gpu(nv, i)
            except nv.NVMLError as exc:
                self.skipped.append(f"GPU {i}: {exc}")
                continue
            if not gpu.has_counter and gpu.power_kind == "none":
                self.skipped.append(f"GPU {i} ({gpu.name}): neither energy nor power is readable")
                continue
            gpus.append(gpu)
        if not gpus:
            raise MeterUnavailable(
                "no selected NVIDIA GPU reports energy or power: " + "; ".join(self.skipped),
                "NVML power needs power management support (not on some vGPU/consumer boards); "
                + _OTHER_METERS,
            )
        return gpus

    def _describe(self) -> MeterInfo:
        gpus = self._gpus
        try:
            driver = _text(self._nv.nvmlSystemGetDriverVersion())
        except self._nv.NVMLError:
            driver = "?"
        per_gpu = "; ".join(f"#{g.index} {g.uuid}: {g.method_text}" for g in gpus)
        notes = [f"skipped {s}" for s in self.skipped]
        if any(g.mig for g in gpus):
            notes.append("MIG enabled: whole-GPU energy, includes other tenants")
        limits = [g.limit_w for g in gpus]
        return MeterInfo(
            name="nvml",
            devices=tuple(f"{g.name} #{g.index}" for g in gpus),
            boundary="GPU board",
            method="counter" if all(g.has_counter for g in gpus) else "integrated",
            update_period_s=max(g.update_period_s for g in gpus),
            power_limit_w=sum(limits) if None not in limits else None,
            detail=f"driver {driver}; {per_gpu}",
            notes=tuple(notes),
        )

    @property
    def warnings(self) -> tuple[str, ...]:
        """Things that went wrong since opening: lost GPUs, counter outages, driver reloads."""
        out = []
        for g in self._gpus:
            if g.lost:
                out.append(f"GPU {g.index} ({g.uuid}) fell off the bus; its energy is no longer counted")
            if g.outages:
                out.append(f"GPU {g.index}: energy counter unavailable {g.outages}x, bridged with power")
            if g.resets:
                out.append(f"GPU {g.index}: energy counter restarted {g.resets}x (driver reload)")
        return tuple(out)

    def read(self) -> MeterReading:
        t0 = self._clock()
        for g in self._gpus:
            g.tick(t0)
        t_s = 0.5 * (t0 + self._clock())
        live = [g for g in self._gpus if not g.lost]
        if not live:
            raise MeterUnavailable(
                "every selected NVIDIA GPU has fallen off the bus (GpuIsLost)",
                "reset the GPU or reload the driver (see `nvidia-smi`), then restart spectop",
            )
        powers = [g.power_w for g in live]
        power_w = sum(p for p in powers if p is not None) if None not in powers else None
        fault = "; ".join(f"GPU {g.index}: {g.fault}" for g in self._gpus if g.fault) or None
        return MeterReading(t_s, sum(g.energy_j for g in self._gpus), power_w, fault)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._nv.nvmlShutdown()
            except self._nv.NVMLError:
                pass
