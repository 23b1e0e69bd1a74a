"""Small building blocks every meter shares: counters that reset or wrap, and power integration."""

from __future__ import annotations


class CounterTracker:
    """Turns raw readings of a hardware energy counter into a non-decreasing total since the first read.

    A decrease is a wrap when the counter's range is known (RAPL's `max_energy_range_uj`), otherwise
    a reset (driver reload, exporter restart): the counter restarted from 0, so the new raw value is
    the energy since then, which is how Prometheus treats counter resets.
    """

    __slots__ = ("wrap_at", "last_raw", "total", "resets", "wraps")

    def __init__(self, wrap_at: float | None = None) -> None:
        self.wrap_at = wrap_at
        self.last_raw: float | None = None
        self.total = 0.0  # in the counter's own unit
        self.resets = 0
        self.wraps = 0

    def delta(self, raw: float) -> float:
        """Feed one raw reading; return the increase since the previous one (0 for the first)."""
        prev, self.last_raw = self.last_raw, raw
        if prev is None:
            return 0.0
        if raw >= prev:
            d = raw - prev
        elif self.wrap_at:
            # Assumes at most one wrap between reads: RAPL wraps after minutes, we read at ~10 Hz.
            d = self.wrap_at - prev + raw
            self.wraps += 1
        else:
            d = raw
            self.resets += 1
        self.total += d
        return d

    def rebase(self, raw: float) -> None:
        """Take `raw` as the new reference without counting anything (after an outage or reload)."""
        self.last_raw = raw


class PowerIntegrator:
    """Trapezoid integral of sampled power into joules; a missing sample leaves a gap bridged linearly."""

    __slots__ = ("last_t_s", "last_w", "energy_j")

    def __init__(self) -> None:
        self.last_t_s: float | None = None
        self.last_w: float | None = None
        self.energy_j = 0.0

    def add(self, t_s: float, power_w: float) -> float:
        """Feed one power sample; return the joules added since the previous sample."""
        d = 0.0
        if self.last_t_s is not None and self.last_w is not None and t_s > self.last_t_s:
            d = 0.5 * (self.last_w + power_w) * (t_s - self.last_t_s)
        self.last_t_s, self.last_w = t_s, power_w
        self.energy_j += d
        return d
