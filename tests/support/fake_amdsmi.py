"""A fake `amdsmi` module (amdsmi 7.0 Python API): energy ticks × µJ resolution, whole-watt power."""

from __future__ import annotations

import types
from dataclasses import dataclass

AMDSMI_STATUS_NOT_SUPPORTED = 2
AMDSMI_STATUS_NO_PERM = 10
RESOLUTION_UJ = 15.259  # typical counter_resolution


@dataclass
class FakeAmdGpu:
    market_name: str = "AMD Instinct MI300X"
    power_w: int = 300
    energy_uj: float = 5e9
    counter_scale: float = 1.0  # != 1 models the bogus accumulators of old ROCm (ROCm/amdsmi#38)
    legacy_key: bool = False  # before amdsmi 6.2.1 the accumulator came back as 'power'
    counter_supported: bool = True
    current_power_na: bool = False  # only MI300+ fill current_socket_power
    cap_uw: int = 750_000_000

    def advance(self, dt_s: float, power_w: int | None = None) -> None:
        if power_w is not None:
            self.power_w = power_w
        self.energy_uj += self.power_w * dt_s * 1e6 * self.counter_scale


def make_amdsmi(gpus: list[FakeAmdGpu], init_status: int | None = None):
    smi = types.ModuleType("amdsmi")

    class AmdSmiException(Exception):
        pass

    class AmdSmiLibraryException(AmdSmiException):
        def __init__(self, err_code: int) -> None:
            super().__init__(f"Error code:\n\t{err_code} | AMDSMI_STATUS")
            self.err_code = err_code

        def get_error_code(self) -> int:
            return self.err_code

    smi.AmdSmiException, smi.AmdSmiLibraryException = AmdSmiException, AmdSmiLibraryException
    state = {"init": 0}

    def amdsmi_init(flag=None):
        if init_status is not None:
            raise AmdSmiLibraryException(init_status)
        state["init"] += 1

    def amdsmi_shut_down():
        state["init"] -= 1

    def energy(h):
        if not h.counter_supported:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED)
        key = "power" if h.legacy_key else "energy_accumulator"
        return {key: int(h.energy_uj / RESOLUTION_UJ), "counter_resolution": RESOLUTION_UJ, "timestamp": 0}

    def power(h):
        return {
            "socket_power": h.power_w,
            "current_socket_power": "N/A" if h.current_power_na else h.power_w,
            "average_socket_power": "N/A",
            "gfx_voltage": 800,
            "soc_voltage": 850,
            "mem_voltage": 1100,
            "power_limit": h.cap_uw // 1_000_000,
        }

    smi.amdsmi_init, smi.amdsmi_shut_down = amdsmi_init, amdsmi_shut_down
    smi.amdsmi_get_processor_handles = lambda: list(gpus)
    smi.amdsmi_get_gpu_asic_info = lambda h: {"market_name": h.market_name, "vendor_id": "0x1002"}
    smi.amdsmi_get_energy_count = energy
    smi.amdsmi_get_power_info = power
    smi.amdsmi_get_power_cap_info = lambda h: {"power_cap": h.cap_uw, "default_power_cap": h.cap_uw}
    smi.init_count = lambda: state["init"]
    return smi
