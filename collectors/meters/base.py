"""The one interface every power source implements: a cumulative joule counter with timestamps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from collectors.fmt import printable

MeterMethod = Literal["counter", "integrated", "estimate"]


@dataclass(frozen=True, slots=True)
class MeterInfo:
    """Who a meter is and what it measures; shown next to every energy figure and saved in files."""

    name: str  # source kind: "nvml", "rapl", "macmon", "amd", "dcgm", "node", "prometheus", "estimate"
    devices: tuple[str, ...]  # human names, e.g. ("NVIDIA H200 #0",)
    boundary: str  # what the joules cover: "GPU board", "CPU package", "SoC (CPU+GPU+ANE)", ...
    method: MeterMethod  # hardware counter, integrated power, or a model estimate
    update_period_s: float  # how often the underlying sensor changes value
    power_limit_w: float | None = None
    detail: str = ""  # free text: driver version, exporter URL, TDP model used, ...
    notes: tuple[str, ...] = field(default_factory=tuple)  # caveats, e.g. "includes other MIG tenants"

    def __post_init__(self) -> None:
        # a remote exporter's labels (GPU model, host) are its own text: never raw on the terminal
        for name in ("name", "boundary", "detail"):
            object.__setattr__(self, name, printable(getattr(self, name)))
        object.__setattr__(self, "devices", tuple(printable(d) for d in self.devices))


@dataclass(frozen=True, slots=True)
class MeterReading:
    """One read of a meter. `energy_j` is cumulative since the meter was opened and never decreases."""

    t_s: float  # time.monotonic() when the value was taken
    energy_j: float
    power_w: float | None = None  # instantaneous or last-interval power, where the source gives one
    fault: str | None = None  # what went wrong with this reading (a counter that ran back), for the checks


@runtime_checkable
class Meter(Protocol):
    """A power source. `read()` may raise `MeterUnavailable` for a tick that failed; the sampler counts it."""

    info: MeterInfo

    def read(self) -> MeterReading: ...

    def close(self) -> None: ...
