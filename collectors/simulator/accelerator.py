"""The one simulated accelerator both arms run on: piecewise-constant power, exact energy.

Power is a function of what runs: with n requests active over all arms, each active request
contributes P_curve(n) / n, where P_curve is the chip-W curve of its arm and prompt class, so a
single arm at batch B draws exactly its calibrated P(B), and two arms at once share one chip by
their total active requests. With nothing active the chip draws the profile's idle power.
Every change of load starts a new power segment with a fresh, seeded noise factor; the energy
counter integrates those segments up to the instant it is read.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from collectors.simulator.profiles import Profile

CurveKey = tuple[str, str]  # (arm kind "plain"|"draft", prompt class name)


@dataclass(frozen=True, slots=True)
class AcceleratorReading:
    """The accelerator at one instant."""

    t_s: float  # clock() at the read
    energy_mj: float  # cumulative since the simulator started, plus `energy_offset_mj`
    power_w: float  # power of the current segment
    active_requests: int  # over all arms


class Accelerator:
    """Shared power model and energy counter; thread-safe."""

    def __init__(
        self,
        profile: Profile,
        *,
        speedup: float = 1.0,
        noise: float = 0.01,
        seed: int = 0,
        energy_offset_mj: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._profile = profile
        self._speedup = speedup
        self._noise = noise
        self._rng = random.Random(f"accelerator:{seed}")
        self._clock = clock
        self._lock = threading.Lock()
        self._loads: dict[str, dict[CurveKey, int]] = {}
        self._t_last = clock()
        self._energy_mj = energy_offset_mj
        self._power_w = profile.idle_w * speedup

    @property
    def speedup(self) -> float:
        return self._speedup

    def _nominal_power_w(self) -> float:
        counts: dict[CurveKey, int] = {}
        for load in self._loads.values():
            for key, n in load.items():
                counts[key] = counts.get(key, 0) + n
        total = sum(counts.values())
        if total == 0:
            return self._profile.idle_w
        power = 0.0
        for (arm, cls_name), n in counts.items():
            cls = self._profile.class_named(cls_name)
            curves = cls.draft if arm == "draft" else cls.plain
            power += n * curves.power_w.at(total) / total
        return power

    def _jitter(self) -> float:
        if self._noise <= 0:
            return 1.0
        return 1.0 + max(-3.0, min(3.0, self._rng.gauss(0.0, 1.0))) * self._noise

    def set_load(self, arm: str, load: Mapping[CurveKey, int]) -> tuple[int, float]:
        """Record what `arm` runs from now on: (active requests over all arms, the clock now)."""
        with self._lock:
            now = self._clock()
            self._energy_mj += self._power_w * max(0.0, now - self._t_last) * 1000.0
            self._t_last = now
            self._loads[arm] = {k: n for k, n in load.items() if n > 0}
            self._power_w = self._nominal_power_w() * self._speedup * self._jitter()
            return sum(sum(v.values()) for v in self._loads.values()), now

    def active_requests(self) -> int:
        with self._lock:
            return sum(sum(v.values()) for v in self._loads.values())

    def read(self) -> AcceleratorReading:
        """Energy integrated exactly up to this instant."""
        with self._lock:
            now = self._clock()
            energy = self._energy_mj + self._power_w * max(0.0, now - self._t_last) * 1000.0
            active = sum(sum(v.values()) for v in self._loads.values())
            return AcceleratorReading(now, energy, self._power_w, active)
