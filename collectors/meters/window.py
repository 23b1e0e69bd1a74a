"""A window's energy from a meter's readings, and how far to trust it (collectors/meters/sampler.py
takes the readings)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from collectors.meters import plausible
from collectors.meters.base import MeterInfo, MeterMethod, MeterReading

SHORT_WINDOW_PERIODS = 10  # below this many sensor periods a window mostly measures sensor lag
MARK_NEAR_S = 0.05  # a reading this close to a window's end was taken for it (a mark beside a poll)


@dataclass(frozen=True, slots=True)
class WindowEnergy:
    """Energy over `[t0_s, t1_s]`, and how far to trust it."""

    energy_j: float  # over the covered part of the window only
    t0_s: float
    t1_s: float
    n_samples: int  # samples inside the window (its ends are interpolated between neighbours)
    covered: bool  # False when samples do not reach both ends: energy_j is then a lower bound
    short_window: bool  # shorter than ~10 update periods: the sensor-lag confound applies
    method: MeterMethod
    update_period_s: float
    unchanged_s: float = 0.0  # the longest stretch inside the window over which the meter's value stood still
    faults: tuple[str, ...] = ()  # what the readings inside the window say went wrong (a counter ran back)
    info: MeterInfo | None = None  # the meter, for its power bound

    @property
    def power_w(self) -> float | None:
        """Mean power over the window."""
        return self.energy_j / (self.t1_s - self.t0_s) if self.t1_s > self.t0_s else None

    def problems(self, work_ran: bool) -> list[plausible.MeterProblem]:
        """Why this covered window's energy is no measurement (stale, ran back, beyond the device's
        power); `work_ran`: the server generated tokens in it, so the meter had to move."""
        if self.info is None or not self.covered:
            return []
        return plausible.window_problems(
            self.energy_j, self.t1_s - self.t0_s, self.unchanged_s, self.faults, self.info, work_ran
        )


def read_near(ts: list[float], t_s: float, within_s: float) -> bool:
    """A reading stored within `within_s` of `t_s`."""
    i = bisect.bisect_left(ts, t_s)
    return any(0 <= j < len(ts) and abs(ts[j] - t_s) <= within_s for j in (i - 1, i))


def energy_at(samples: list[MeterReading], ts: list[float], t_s: float) -> float:
    # Caller guarantees ts[0] <= t_s <= ts[-1].
    i = bisect.bisect_left(ts, t_s)
    if ts[i] == t_s:
        return samples[i].energy_j
    lo, hi = samples[i - 1], samples[i]
    return lo.energy_j + (hi.energy_j - lo.energy_j) * (t_s - lo.t_s) / (hi.t_s - lo.t_s)
