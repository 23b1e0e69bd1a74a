"""A labelled guess for machines with no readable sensor: CPU load × TDP, CodeCarbon's machine model."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from collectors.meters.base import MeterInfo, MeterReading

WATTS_PER_THREAD = 4.0  # CodeCarbon's DEFAULT_POWER_PER_CORE, used when the model is unknown
UPDATE_PERIOD_S = 0.1  # cpu_times advances in 10 ms ticks; a 0.1 s load figure is already coarse
# Package TDPs (W) for a few common parts, matched as substrings of the model name, most specific
# first. A guess either way; the table only keeps obvious families from the threads × 4 W rule.
TDP_TABLE_W: tuple[tuple[str, float], ...] = (
    ("EPYC 9654", 360.0),
    ("EPYC 9554", 360.0),
    ("EPYC 7763", 280.0),
    ("EPYC 7543", 225.0),
    ("Xeon Platinum 8480", 350.0),
    ("Xeon Platinum 8380", 270.0),
    ("Ryzen 9 7950X", 170.0),
    ("Ryzen 9 5950X", 105.0),
    ("Ryzen 7 7800X3D", 120.0),
    ("Core(TM) i9-14900K", 125.0),
    ("Core(TM) i9-13900K", 125.0),
    ("Core(TM) i7-12700K", 125.0),
    ("Apple M1", 20.0),
    ("Apple M2", 22.0),
    ("Apple M3", 22.0),
)


def cpu_model_name() -> str:
    """The CPU model string from /proc/cpuinfo on Linux, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def guess_tdp_w(model: str, threads: int) -> tuple[float, str]:
    """TDP and where it came from: the table when the model matches, else threads × 4 W."""
    for part, tdp_w in TDP_TABLE_W:
        if part.lower() in model.lower():
            return tdp_w, f"TDP {tdp_w:g} W from the table ({part})"
    tdp_w = max(1, threads) * WATTS_PER_THREAD
    return tdp_w, f"TDP {tdp_w:g} W = {threads} threads × {WATTS_PER_THREAD:g} W (model not in table)"


def _busy_total(times: Any) -> tuple[float, float]:
    # guest time is already inside user time on Linux; iowait is idle for this purpose.
    total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    return total - times.idle - getattr(times, "iowait", 0.0), total


def model_power_w(tdp_w: float, load: float) -> float:
    """CodeCarbon 3.x machine mode: `P = TDP × (0.1 + 0.9 × load³)`, at least 10 % of TDP."""
    return tdp_w * (0.1 + 0.9 * load**3)


class EstimateMeter:
    """Whole-CPU load from its own `cpu_times()` baseline (not `cpu_percent`, whose state is shared)."""

    reads_at_once = True  # one /proc/stat read: a mark reads it on the caller's thread (sampler.py)

    def __init__(
        self,
        *,
        tdp_w: float | None = None,
        cpu_times: Callable[[], Any] | None = None,
        model: str | None = None,
        threads: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cpu_times = cpu_times or (lambda: psutil.cpu_times())  # looked up per call: patchable
        self._clock = clock
        model = model or cpu_model_name()
        threads = threads or psutil.cpu_count(logical=True) or 1
        if tdp_w is None:
            self.tdp_w, source = guess_tdp_w(model, threads)
        else:
            self.tdp_w, source = float(tdp_w), f"TDP {tdp_w:g} W given"
        self._prev = self._busy_total_now()
        self._t_prev = clock()
        self._energy_j = 0.0
        self.load = 0.0
        self.info = MeterInfo(
            name="estimate",
            devices=(model,),
            boundary="CPU package (estimate)",
            method="estimate",
            update_period_s=UPDATE_PERIOD_S,
            power_limit_w=self.tdp_w,
            detail=f"estimated: TDP × (0.1 + 0.9 × load³), CodeCarbon model; {source}",
            notes=("not a measurement: no power sensor was readable", "GPU and DRAM not included"),
        )

    def read(self) -> MeterReading:
        now = self._busy_total_now()
        t_s = self._clock()
        (busy0, total0), (busy1, total1) = self._prev, now
        dt_cpu = total1 - total0
        if dt_cpu > 0:
            self.load = min(1.0, max(0.0, (busy1 - busy0) / dt_cpu))
        power_w = model_power_w(self.tdp_w, self.load)
        # The load is the mean over [t_prev, t], so the modelled power holds over that whole interval.
        self._energy_j += power_w * max(0.0, t_s - self._t_prev)
        self._prev, self._t_prev = now, t_s
        return MeterReading(t_s=t_s, energy_j=self._energy_j, power_w=power_w)

    def _busy_total_now(self) -> tuple[float, float]:
        return _busy_total(self._cpu_times())

    def close(self) -> None:
        """Nothing to release."""
