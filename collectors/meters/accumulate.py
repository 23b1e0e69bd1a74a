"""Small building blocks every meter shares: counters that reset or wrap, and power integration."""

from __future__ import annotations


class CounterTracker:
    """Turns raw readings of a hardware energy counter into a non-decreasing total since the first read.

    A decrease is a wrap when the counter's range is known (RAPL's `max_energy_range_uj`), otherwise
    a reset (driver reload, exporter restart): the counter restarted from 0, so the new raw value is
    the energy since then, which is how Prometheus treats counter resets. But a counter that merely
    ran back (a glitch, two sources behind one name) must not be read as a reset, which would add
    its whole value: given `max_rate` (the most the counter can grow per second, in its own unit)
    and the reading's time, a wrap or reset is believed only when the energy it implies could have
    been counted since the previous read, and a reset only when the new value is less than half the
    old one. Any other decrease counts nothing, is taken as the new reference, and is reported in
    `fault` (and counted in `backwards`) so the window it falls in is flagged.
    """

    __slots__ = (
        "wrap_at",
        "max_rate",
        "last_raw",
        "last_t_s",
        "total",
        "resets",
        "wraps",
        "backwards",
        "fault",
    )

    def __init__(self, wrap_at: float | None = None, max_rate: float | None = None) -> None:
        self.wrap_at = wrap_at
        self.max_rate = max_rate
        self.last_raw: float | None = None
        self.last_t_s: float | None = None
        self.total = 0.0  # in the counter's own unit
        self.resets = 0
        self.wraps = 0
        self.backwards = 0
        self.fault: str | None = None  # set by the last delta() when the counter ran back

    def delta(self, raw: float, t_s: float | None = None) -> float:
        """Feed one raw reading (taken at `t_s`); return the increase since the previous one (0 for the first)."""
        prev, prev_t_s = self.last_raw, self.last_t_s
        self.last_raw, self.last_t_s, self.fault = raw, t_s, None
        if prev is None:
            return 0.0
        if raw >= prev:
            d = raw - prev
        else:
            d = self.wrap_at - prev + raw if self.wrap_at else raw
            possible = (
                self.max_rate is None
                or t_s is None
                or prev_t_s is None
                or d <= self.max_rate * max(t_s - prev_t_s, 0.0)
            )
            if possible and self.wrap_at:
                # Assumes at most one wrap between reads: RAPL wraps after minutes, we read at ~10 Hz.
                self.wraps += 1
            elif possible and (self.max_rate is None or raw < prev / 2):
                self.resets += 1
            else:
                self.backwards += 1
                self.fault = f"from {prev:g} to {raw:g}"
                return 0.0
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
