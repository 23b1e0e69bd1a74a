"""The one simulated accelerator both arms run on: piecewise-constant power, exact energy.

Power is a function of what runs: with n requests active over all arms, each active request
contributes P_curve(n) / n, where P_curve is the chip-W curve of its arm and prompt class, so a
single arm at batch B draws exactly its calibrated P(B), and two arms at once share one chip by
their total active requests. With nothing active the chip draws the profile's idle power.
Every change of load starts a new power segment with a fresh, seeded noise factor.

Pitfall handled: a loaded machine stalls the engines' threads. Loads change at the instants an
engine's schedule says (`set_load(at_s=...)`), not when its thread gets round to it, and the
counter is integrated only up to the instant every arm has decided its load (its horizon: the end
of the step it runs, or the arrival of a request it has not admitted yet; `hold`, `expect`). A
stalled thread therefore delays when the energy becomes readable, never how much there is: the
joules of a window are those of the steps scheduled in it, exactly as its tokens are.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from collectors.simulator.k0_overhead import VLLM_PUBLISHED, K0Overhead
from collectors.simulator.profiles import Profile

CurveKey = tuple[str, str]  # (arm kind "plain"|"draft"|a profile's named arm, prompt class name)


@dataclass(frozen=True, slots=True)
class AcceleratorReading:
    """The accelerator at one instant."""

    t_s: float  # the instant the energy is integrated up to: the read, or an overdue arm's horizon
    energy_mj: float  # cumulative since the simulator started, plus `energy_offset_mj`
    power_w: float  # power of the segment at t_s
    active_requests: int  # over all arms, at t_s
    busy_s: float  # cumulative seconds with at least one request active
    busy_energy_mj: float  # the part of energy_mj drawn during those seconds
    request_s: float  # cumulative request-seconds (active requests × seconds): over busy_s, the mean batch


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
        k0_overhead: K0Overhead = VLLM_PUBLISHED,
    ) -> None:
        self._profile = profile
        self.k0_overhead = k0_overhead
        self._speedup = speedup
        self._noise = noise
        self._rng = random.Random(f"accelerator:{seed}")
        self._clock = clock
        self._lock = threading.Lock()
        self._loads: dict[str, dict[CurveKey, int]] = {}  # in effect at _t_last
        self._latest: dict[str, dict[CurveKey, int]] = {}  # as last decided, pending changes included
        self._pending: list[tuple[float, int, str, dict[CurveKey, int]]] = []  # (t_s, seq, arm, load)
        self._seq = itertools.count()
        self._horizons: dict[str, float] = {}
        self._t_last = clock()
        self._energy_mj = energy_offset_mj
        self._busy_s = 0.0
        self._busy_energy_mj = 0.0
        self._request_s = 0.0
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
            power_w = cls.curves(arm).power_w.at(total)
            if arm == "k0":  # a K = 0 step: plain's power, with the overhead's stretch at idle
                power_w = self.k0_overhead.power_w(power_w, self._profile.idle_w, total)
            power += n * power_w / total
        return power

    def _jitter(self) -> float:
        if self._noise <= 0:
            return 1.0
        return 1.0 + max(-3.0, min(3.0, self._rng.gauss(0.0, 1.0))) * self._noise

    def _integrate(self, t_s: float) -> None:
        """Run the current segment on to `t_s`."""
        dt = max(0.0, t_s - self._t_last)
        energy = self._power_w * dt * 1000.0
        self._energy_mj += energy
        active = sum(sum(load.values()) for load in self._loads.values())
        if active:
            self._busy_s += dt
            self._busy_energy_mj += energy
            self._request_s += active * dt
        self._t_last = max(self._t_last, t_s)

    def _settle(self, t_s: float) -> None:
        """Apply the decided changes up to `t_s` in time order and integrate up to it."""
        while self._pending and self._pending[0][0] <= t_s:
            t_change, _, arm, load = self._pending.pop(0)
            self._integrate(t_change)
            self._loads[arm] = load
            self._power_w = self._nominal_power_w() * self._speedup * self._jitter()
        self._integrate(t_s)

    def _settle_decided(self) -> float:
        """Settle up to now, or to the earliest horizon if that comes first; returns that instant."""
        t_s = min(self._clock(), min(self._horizons.values(), default=math.inf))
        self._settle(t_s)
        return t_s

    def set_load(self, arm: str, load: Mapping[CurveKey, int], at_s: float | None = None) -> int:
        """`arm` runs `load` from `at_s` (now by default); its horizon becomes `at_s` until `hold`
        extends it (a cleared load has none). Returns the active requests over all arms."""
        with self._lock:
            t_s = max(self._t_last, self._clock() if at_s is None else at_s)
            decided = {k: n for k, n in load.items() if n > 0}
            bisect.insort(self._pending, (t_s, next(self._seq), arm, decided))
            self._latest[arm] = decided
            if decided:
                self._horizons[arm] = t_s
            else:
                self._horizons.pop(arm, None)
            self._settle_decided()
            return sum(sum(v.values()) for v in self._latest.values())

    def hold(self, arm: str, until_s: float | None) -> None:
        """`arm`'s load is decided up to `until_s` (None: until it says otherwise)."""
        with self._lock:
            if until_s is None:
                self._horizons.pop(arm, None)
            else:
                self._horizons[arm] = until_s
            self._settle_decided()

    def expect(self, arm: str, at_s: float) -> None:
        """`arm` may change its load at `at_s` (a request arrived): no energy is read past it yet."""
        with self._lock:
            self._horizons[arm] = min(self._horizons.get(arm, math.inf), at_s)

    def active_requests(self) -> int:
        """Requests the arms run as last decided."""
        with self._lock:
            return sum(sum(v.values()) for v in self._latest.values())

    def read(self) -> AcceleratorReading:
        """Energy integrated exactly up to now, or up to the horizon of an arm whose thread is late."""
        with self._lock:
            self._settle_decided()
            active = sum(sum(v.values()) for v in self._loads.values())
            return AcceleratorReading(
                self._t_last,
                self._energy_mj,
                self._power_w,
                active,
                self._busy_s,
                self._busy_energy_mj,
                self._request_s,
            )
