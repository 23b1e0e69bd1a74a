"""A fake `pynvml` module: the real error classes and codes, mJ counters, mW power, field value structs.

Built per test by `make_pynvml(gpus)`. Each `FakeGpu` holds the true state; tests move it with
`advance(dt_s, power_w)` and break it with the error fields.
"""

from __future__ import annotations

import string
import types
from dataclasses import dataclass

import pynvml as real  # only for its ctypes structs and constants, which need no driver

ERROR_CODES = {
    "UNINITIALIZED": 1,
    "INVALID_ARGUMENT": 2,
    "NOT_SUPPORTED": 3,
    "NO_PERMISSION": 4,
    "NOT_FOUND": 6,
    "DRIVER_NOT_LOADED": 9,
    "TIMEOUT": 10,
    "LIBRARY_NOT_FOUND": 12,
    "FUNCTION_NOT_FOUND": 13,
    "GPU_IS_LOST": 15,
    "RESET_REQUIRED": 16,
    "LIB_RM_VERSION_MISMATCH": 18,
    "NOT_READY": 27,
    "UNKNOWN": 999,
}
NOT_SUPPORTED, NO_PERMISSION, GPU_IS_LOST, NOT_READY, UNKNOWN = 3, 4, 15, 27, 999
LIBRARY_NOT_FOUND, DRIVER_NOT_LOADED = 12, 9


def class_name(err_name: str) -> str:
    """The real binding's naming rule: NVML_ERROR_GPU_IS_LOST -> NVMLError_GpuIsLost."""
    return "NVMLError_" + string.capwords(err_name, "_").replace("_", "")


@dataclass
class FakeGpu:
    name: str | bytes = "NVIDIA H200"
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    arch: int = 9  # NVML_DEVICE_ARCH_HOPPER
    limit_mw: int = 700_000
    energy_mj: float = 1_000_000.0  # since driver load; never starts at 0 on a real box
    power_mw: float = 100_000.0
    counter_error: int | None = None  # code the counter raises while set (an outage)
    instant_error: int | None = None  # per-value nvmlReturn of NVML_FI_DEV_POWER_INSTANT
    usage_error: int | None = None  # code nvmlDeviceGetPowerUsage raises
    lost: bool = False
    mig: bool = False

    def advance(self, dt_s: float, power_w: float) -> None:
        """The GPU draws `power_w` for `dt_s`: the counter moves in mJ, power reads in mW."""
        self.energy_mj += power_w * dt_s * 1000.0
        self.power_mw = power_w * 1000.0


def make_pynvml(gpus: list[FakeGpu], init_error: int | None = None, driver: str = "570.86.15"):
    nv = types.ModuleType("pynvml")

    class NVMLError(Exception):
        _valClassMapping: dict[int, type] = {}

        def __new__(cls, value):
            if cls is NVMLError:
                cls = NVMLError._valClassMapping.get(value, cls)
            obj = Exception.__new__(cls)
            obj.value = value
            return obj

        def __str__(self):
            return f"NVML error {self.value}"

    nv.NVMLError = NVMLError
    for err_name, code in ERROR_CODES.items():
        setattr(nv, f"NVML_ERROR_{err_name}", code)

        def new(typ, *args, _code=code):
            return NVMLError.__new__(typ, _code)

        cls = type(class_name(err_name), (NVMLError,), {"__new__": new})
        setattr(nv, cls.__name__, cls)
        NVMLError._valClassMapping[code] = cls

    for const in (
        "NVML_SUCCESS",
        "NVML_FI_DEV_POWER_INSTANT",
        "NVML_VALUE_TYPE_DOUBLE",
        "NVML_VALUE_TYPE_UNSIGNED_INT",
        "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG",
        "NVML_DEVICE_MIG_ENABLE",
    ):
        setattr(nv, const, getattr(real, const))
    nv.calls = []
    state = {"init": 0}

    def check(gpu, code=None):
        if gpu.lost:
            raise NVMLError(GPU_IS_LOST)
        if code is not None:
            raise NVMLError(code)

    def nvmlInit():
        if init_error is not None:
            raise NVMLError(init_error)
        state["init"] += 1

    def nvmlShutdown():
        state["init"] -= 1

    def nvmlDeviceGetFieldValues(h, field_ids):
        check(h)
        values = (real.c_nvmlFieldValue_t * len(field_ids))()
        for v, fid in zip(values, field_ids):
            v.fieldId = fid
            if fid == real.NVML_FI_DEV_POWER_INSTANT and h.instant_error is None:
                v.nvmlReturn, v.valueType = real.NVML_SUCCESS, real.NVML_VALUE_TYPE_UNSIGNED_INT
                v.value.uiVal = int(h.power_mw)
            else:  # the call itself succeeds; the failure is in the value's own return code
                v.nvmlReturn = h.instant_error or NOT_SUPPORTED
        return values

    def counter(h):
        check(h, h.counter_error)
        return int(h.energy_mj)

    def usage(h):
        check(h, h.usage_error)
        return int(h.power_mw)

    nv.nvmlInit, nv.nvmlShutdown = nvmlInit, nvmlShutdown
    nv.nvmlDeviceGetCount = lambda: len(gpus)
    nv.nvmlDeviceGetHandleByIndex = lambda i: gpus[i]
    nv.nvmlDeviceGetName = lambda h: h.name
    nv.nvmlDeviceGetUUID = lambda h: h.uuid
    nv.nvmlSystemGetDriverVersion = lambda: driver
    nv.nvmlDeviceGetEnforcedPowerLimit = lambda h: (check(h), h.limit_mw)[1]
    nv.nvmlDeviceGetArchitecture = lambda h: (check(h), h.arch)[1]
    nv.nvmlDeviceGetMigMode = lambda h: [int(h.mig), int(h.mig)]
    nv.nvmlDeviceGetTotalEnergyConsumption = counter
    nv.nvmlDeviceGetPowerUsage = usage
    nv.nvmlDeviceGetFieldValues = nvmlDeviceGetFieldValues
    nv.init_count = lambda: state["init"]
    return nv
