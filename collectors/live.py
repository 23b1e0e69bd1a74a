"""Live energy accounting over server polls and meter readings: rolling mJ/token, idle, batch.

UI-free, so the dashboard and the Prometheus exporter compute the same figures. Times are the
monotonic clock shared by snapshots (`taken_at_s`) and meter readings (`t_s`).
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass

from collectors import ledger
from collectors.servers.snapshot import ServerSnapshot

HISTORY = 300  # polls kept (5 minutes at 1 s)


@dataclass(frozen=True, slots=True)
class PowerPoint:
    t_s: float
    power_w: float
    energy_j: float


@dataclass(frozen=True, slots=True)
class RollingEnergy:
    """Energy per token over the rolling window that both polls and meter readings cover."""

    window_s: float | None
    energy_j: float | None
    tokens: int
    mj_per_token: float | None
    net_mj_per_token: float | None


class LiveLedger:
    """Histories of polls and power; appended to by one thread (the UI or the exporter loop)."""

    def __init__(self, energy_window_s: float = 30.0) -> None:
        self.energy_window_s = energy_window_s
        self.snapshots: deque[ServerSnapshot] = deque(maxlen=HISTORY)
        self.power: deque[PowerPoint] = deque(maxlen=HISTORY * 10)
        self.known_idle_w: float | None = None  # a measured baseline (a sweep's) beats the estimate
        self.live_since_s = float("-inf")  # ignore what happened before (a sweep's traffic)

    @property
    def latest(self) -> ServerSnapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def add_snapshot(self, snap: ServerSnapshot) -> None:
        self.snapshots.append(snap)

    def add_power(self, t_s: float, power_w: float, energy_j: float) -> None:
        self.power.append(PowerPoint(t_s, power_w, energy_j))

    def energy_between_j(self, t0_s: float, t1_s: float) -> float | None:
        return ledger.window_energy_j(
            [p.t_s for p in self.power], [p.energy_j for p in self.power], t0_s, t1_s
        )

    def idle_w(self) -> float | None:
        """The known baseline, else the median power over polls where no slot was busy (10+ readings)."""
        if self.known_idle_w is not None:
            return self.known_idle_w
        spans = [
            (s.taken_at_s - (s.window_s or 0), s.taken_at_s)
            for s in self.snapshots
            if s.window_s and s.slots_busy == 0 and not s.window_tokens
        ]
        samples = [p.power_w for p in self.power if any(a <= p.t_s <= b for a, b in spans)]
        return statistics.median(samples) if len(samples) >= 10 else None

    def rolling(self) -> RollingEnergy:
        """Window joules over window tokens (Eq. 3), gross and net of idle."""
        if not self.snapshots or not self.power:
            return RollingEnergy(None, None, 0, None, None)
        # polls and meter readings arrive on their own schedules: end where both have data
        t_end = min(self.snapshots[-1].taken_at_s, self.power[-1].t_s)
        window = [
            s
            for s in self.snapshots
            if s.window_s
            and s.taken_at_s <= t_end
            and t_end - s.taken_at_s < self.energy_window_s
            and s.taken_at_s - s.window_s >= self.live_since_s
        ]
        if not window:
            return RollingEnergy(None, None, 0, None, None)
        tokens = sum(s.window_tokens or 0 for s in window)
        t0, t1 = window[0].taken_at_s - (window[0].window_s or 0), window[-1].taken_at_s
        energy = self.energy_between_j(max(t0, self.power[0].t_s), t1)
        gross = ledger.mj_per_token(energy, tokens) if energy is not None else None
        idle = self.idle_w()
        net = (
            ledger.mj_per_token(ledger.net_energy_j(energy, idle, t1 - t0), tokens)
            if energy is not None and idle is not None
            else None
        )
        return RollingEnergy(t1 - t0, energy, tokens, gross, net)

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
