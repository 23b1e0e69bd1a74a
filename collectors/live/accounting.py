"""Live energy accounting over server polls and meter readings: rolling mJ/token, idle, batch.

UI-free, so the dashboard and the Prometheus exporter compute the same figures. Times are the
monotonic clock shared by snapshots (`taken_at_s`) and meter readings (`t_s`).

Pitfalls handled: energy-only meters (RAPL, node_exporter) give no power, so `add_reading` derives
it from the energy slope instead of storing 0 W; a reading that is not newer than the last one is
dropped, so the power history stays sorted for bisection; idle power is found by bisecting merged
idle spans (a reading on the boundary of two spans counts once) and cached until an input changes;
the rolling window holds only polls the meter covers, so a meter that starts after the first poll
does not divide part of a window's joules by all of its tokens; a meter that stood still while the
server worked, ran back or reads more power than its devices can draw gives no mJ/token over the
window but says why (`RollingEnergy.meter_problem`, the checks of collectors/meters/plausible.py),
so a stuck exporter never shows as 0 mJ/token.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import overload

from collectors.energy import ledger
from collectors.meters import plausible
from collectors.meters.base import MeterInfo, MeterReading
from collectors.servers.latency import ServerLatency
from collectors.servers.rolling import rolling_drafting, rolling_latency
from collectors.servers.snapshot import ServerSnapshot

HISTORY = 300  # polls kept (5 minutes at 1 s)
TOK_S_WINDOW_S = 5.0  # tokens/s "now" is over the polls of this many seconds


@dataclass(frozen=True, slots=True)
class PowerPoint:
    t_s: float
    power_w: float
    energy_j: float
    fault: str | None = None  # the meter's counter ran back at this reading


BELOW_IDLE = "below the idle baseline: re-measure idle"


@dataclass(frozen=True, slots=True)
class RollingEnergy:
    """Energy per token over the rolling window that both polls and meter readings cover."""

    window_s: float | None
    energy_j: float | None
    tokens: int
    mj_per_token: float | None
    net_mj_per_token: float | None
    meter_problem: str | None = None  # why the meter's joules are no measurement here (then no mJ/token)
    net_problem: str | None = None  # why there is no net figure though there is a gross one


class _Column(Sequence[float]):
    """One field of the power points, read in place (a deque indexes in a few steps at this size)."""

    def __init__(self, points: deque[PowerPoint], field: str) -> None:
        self._points, self._field = points, field

    def __len__(self) -> int:
        return len(self._points)

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[float]: ...
    def __getitem__(self, index: int | slice) -> float | Sequence[float]:
        if isinstance(index, slice):
            return [getattr(p, self._field) for p in list(self._points)[index]]
        value: float = getattr(self._points[index], self._field)
        return value


class LiveLedger:
    """Histories of polls and power; appended to by one thread (the UI or the exporter loop)."""

    def __init__(self, energy_window_s: float = 30.0, meter: MeterInfo | None = None) -> None:
        self.energy_window_s = energy_window_s
        self.meter = meter  # its power bound and update period, for the plausibility checks
        self.snapshots: deque[ServerSnapshot] = deque(maxlen=HISTORY)
        self.power: deque[PowerPoint] = deque(maxlen=HISTORY * 10)
        self._known_idle_w: float | None = None
        self._idle_w: float | None = None
        self._idle_stale = True  # idle_w is computed once per change of its inputs
        self._last_reading: MeterReading | None = None
        self.live_since_s = float("-inf")  # ignore what happened before (a sweep's traffic)

    @property
    def known_idle_w(self) -> float | None:
        """A measured baseline (a sweep's): it beats the estimate from idle polls."""
        return self._known_idle_w

    @known_idle_w.setter
    def known_idle_w(self, value: float | None) -> None:
        self._known_idle_w, self._idle_stale = value, True

    @property
    def latest(self) -> ServerSnapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def add_snapshot(self, snap: ServerSnapshot) -> None:
        self.snapshots.append(snap)
        self._idle_stale = True

    def add_power(self, t_s: float, power_w: float, energy_j: float, fault: str | None = None) -> None:
        self.power.append(PowerPoint(t_s, power_w, energy_j, fault))
        self._idle_stale = True

    def add_reading(self, reading: MeterReading) -> PowerPoint | None:
        """Store a meter reading as a power point, its power from the energy slope where it has none.

        Returns the point, or None when there is nothing to store: a reading not newer than the last
        one, or the first reading of an energy-only meter (no slope yet).
        """
        last = self._last_reading  # not the last point: an energy-only meter's first reading stores none
        if last is not None and reading.t_s <= last.t_s:
            return None
        self._last_reading = reading
        power_w = reading.power_w
        if power_w is None:
            if last is None:
                return None
            power_w = (reading.energy_j - last.energy_j) / (reading.t_s - last.t_s)
        self.add_power(reading.t_s, power_w, reading.energy_j, reading.fault)
        return self.power[-1]

    def busy_slots_during(self, t0_s: float, t1_s: float) -> list[int]:
        """The busy slots of the polls taken within [t0_s, t1_s] (a logged request's neighbours)."""
        return [
            s.slots_busy for s in self.snapshots if t0_s <= s.taken_at_s <= t1_s and s.slots_busy is not None
        ]

    def energy_between_j(self, t0_s: float, t1_s: float) -> float | None:
        # bisected in place: copying 3,000 points per call was most of a meter read's cost
        return ledger.window_energy_j(_Column(self.power, "t_s"), _Column(self.power, "energy_j"), t0_s, t1_s)

    def idle_w(self) -> float | None:
        """The known baseline, else the median power over polls where no slot was busy (10+ readings)."""
        if self._known_idle_w is not None:
            return self._known_idle_w
        if self._idle_stale:
            self._idle_w, self._idle_stale = self._idle_from_polls(), False
        return self._idle_w

    def _idle_from_polls(self) -> float | None:
        spans = sorted(
            (s.taken_at_s - (s.window_s or 0), s.taken_at_s)
            for s in self.snapshots
            if s.window_s and s.slots_busy == 0 and not s.window_tokens
        )
        merged: list[list[float]] = []
        for a, b in spans:  # consecutive idle polls share an end: merge so no reading counts twice
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        points = list(self.power)  # sorted by time: add_reading keeps it so

        def at(t_s: float, side: Callable[..., int] = bisect.bisect_left) -> int:
            return side(points, t_s, key=lambda p: p.t_s)

        samples = [p.power_w for a, b in merged for p in points[at(a) : at(b, bisect.bisect_right)]]
        return statistics.median(samples) if len(samples) >= 10 else None

    def rolling(self) -> RollingEnergy:
        """Window joules over window tokens (Eq. 3), gross and net of idle."""
        if not self.snapshots or not self.power:
            return RollingEnergy(None, None, 0, None, None)
        # polls and meter readings arrive on their own schedules: whole polls the meter covers, so
        # joules, tokens and idle all span [t0, t1] (a poll begun before the first reading is left out)
        t_start = max(self.live_since_s, self.power[0].t_s)
        t_end = min(self.snapshots[-1].taken_at_s, self.power[-1].t_s)
        window = [
            s
            for s in self.snapshots
            if s.window_s
            and s.taken_at_s <= t_end
            and t_end - s.taken_at_s < self.energy_window_s
            and s.taken_at_s - s.window_s >= t_start
        ]
        if not window:
            return RollingEnergy(None, None, 0, None, None)
        tokens = sum(s.window_tokens or 0 for s in window)
        t0, t1 = window[0].taken_at_s - (window[0].window_s or 0), window[-1].taken_at_s
        energy = self.energy_between_j(t0, t1)
        problem = self._meter_problem(t0, t1, energy, tokens)
        if problem is not None:
            return RollingEnergy(t1 - t0, energy, tokens, None, None, problem)
        gross = ledger.mj_per_token(energy, tokens) if energy is not None else None
        idle = self.idle_w()
        net = (
            ledger.mj_per_token(ledger.net_energy_j(energy, idle, t1 - t0), tokens)
            if energy is not None and idle is not None
            else None
        )
        if net is not None and net < 0:  # the baseline is stale or wrong: no energy is negative
            return RollingEnergy(t1 - t0, energy, tokens, gross, None, net_problem=BELOW_IDLE)
        return RollingEnergy(t1 - t0, energy, tokens, gross, net)

    def _meter_problem(self, t0_s: float, t1_s: float, energy_j: float | None, tokens: int) -> str | None:
        """The first reason the meter's joules over [t0_s, t1_s] are no measurement, if any."""
        if self.meter is None or energy_j is None:
            return None
        points = self.power  # bisected in place, not copied
        lo = max(0, bisect.bisect_left(points, t0_s, key=lambda p: p.t_s) - 1)
        around = list(
            itertools.islice(points, lo, bisect.bisect_right(points, t1_s, key=lambda p: p.t_s) + 1)
        )
        problems = plausible.window_problems(
            energy_j,
            t1_s - t0_s,
            plausible.unchanged_s(around, t0_s, t1_s, self.meter.method == "integrated"),
            [p.fault for p in around if p.fault and p.t_s > t0_s],
            self.meter,
            work_ran=tokens > 0,
        )
        return problems[0].message if problems else None

    def drafting(self) -> ServerSnapshot | None:
        """The latest poll with its drafting counts summed over the rolling window (collectors/servers/rolling.py)."""
        return rolling_drafting(self.snapshots, self.energy_window_s, self.live_since_s)

    def server_latency(self) -> ServerLatency | None:
        """The server's own latency tails, cache and finish reasons over the same rolling window."""
        return rolling_latency(self.snapshots, self.energy_window_s, self.live_since_s)

    def recent_tok_s(self, span_s: float = TOK_S_WINDOW_S) -> float | None:
        """Tokens per second over the polls that ended in the last `span_s` seconds (their tokens
        over their seconds). One poll's second holds whole verify steps, so it swings by a step's
        tokens: 150.9 to 164.8 at a steady 163 on the demo."""
        latest = self.latest
        tokens = seconds = 0.0
        for s in reversed(self.snapshots):
            if latest is None or latest.taken_at_s - s.taken_at_s >= span_s:
                break
            if s.live_tok_s is None or not s.window_s or s.taken_at_s - s.window_s < self.live_since_s:
                continue  # a failed poll, the first one, or one that began before a sweep ended
            tokens += s.live_tok_s * s.window_s
            seconds += s.window_s
        return tokens / seconds if seconds else None

    def current_batch(self) -> float | None:
        """Requests per decode over the last polls, else the busy slots now."""
        recent = [
            s.busy_slots_per_decode
            for s in list(self.snapshots)[-10:]
            if s.busy_slots_per_decode and s.taken_at_s - (s.window_s or 0) >= self.live_since_s
        ]
        if recent:
            return statistics.fmean(recent)
        snap = self.latest
        return float(snap.slots_busy) if snap and snap.slots_busy else None
