"""A synthetic two-day stream of polls and meter-counter readings, fed to the ledger as spectop would.

The load follows the hour since the stream began: batch b = 1 + (hour mod 8), power 150 + 40 b W,
300 b tokens per 10-s poll. Meter readings every 5 s, on the polls' grid, so every window's joules
are exactly 10 s × its power. Over a day b runs 1..8 three times: mean b = 4.5, mean power
150 + 40 × 4.5 = 330 W, so the counter gains 330 × 86,400 = 28,512,000 J a day.
"""

from __future__ import annotations

from pathlib import Path

from collectors.ledgerdb.store import EnergyStore
from collectors.ledgerdb.writer import LedgerWriter
from collectors.live.accounting import LiveLedger
from collectors.meters.base import MeterReading
from collectors.recording.writer import Recorder
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.records import Summary

URL = "http://gpu-7:8080"
POLL_S, READ_S = 10, 5


def batch_at(t_s: float) -> int:
    return 1 + int(t_s // 3600) % 8


def power_w(t_s: float) -> float:
    """The power during the poll window that ends at or after t_s (windows are (10k, 10k + 10])."""
    return 150.0 + 40 * batch_at((t_s - 1e-9) // POLL_S * POLL_S)


class Meter:
    """The hardware counter: it runs whether spectop does or not (so across its restart)."""

    def __init__(self) -> None:
        self.t_s, self.energy_j = 0.0, 0.0

    def read_at(self, t_s: float) -> MeterReading:
        while self.t_s < t_s:  # whole reading intervals: power is constant within each
            self.t_s += READ_S
            self.energy_j += READ_S * power_w(self.t_s)
        return MeterReading(t_s, self.energy_j, power_w(t_s))


def snapshot(t_s: float, first: bool) -> ServerSnapshot:
    b = batch_at(t_s - POLL_S)
    return ServerSnapshot(
        url=URL,
        backend="test",
        taken_at_s=t_s,
        status="ok",
        slots_busy=b,
        drafting=True,
        window_s=None if first else POLL_S,
        window_tokens=None if first else 300 * b,
        window_drafted=None if first else 400 * b,
        window_accepted=None if first else 200 * b,
        busy_slots_per_decode=None if first else float(b),
    )


def run_spectop(
    path: Path, meter: Meter, from_s: int, to_s: int, wall0_s: float, summary: Summary | None = None
) -> None:
    """One spectop process from `from_s` to `to_s` (stream seconds): its own LiveLedger, writer and
    store connection; left without closing, as a killed process leaves it."""
    now = [float(from_s)]
    live = LiveLedger(30.0)
    writer = LedgerWriter(
        EnergyStore(path), URL, summary, clock=lambda: now[0], wall_clock=lambda: wall0_s + now[0]
    )
    for t in range(from_s, to_s + 1, READ_S):
        now[0] = t
        live.add_reading(meter.read_at(t))
        if t % POLL_S == 0:
            live.add_snapshot(snapshot(t, first=t == from_s))
            writer.flush(live)


def record_spectop(path: Path, meter: Meter, from_s: int, to_s: int, wall0_s: float) -> Path:
    """One spectop process from `from_s` to `to_s` as its `--record FILE` holds it: the meter's
    readings as they arrive (a batch a poll) and each poll, on the process's monotonic clock (the
    stream's seconds: one machine's, so it runs on across the restart) and its wall clock."""
    now = [float(from_s)]
    recorder = Recorder(
        path, server_url=URL, meter=None, clock=lambda: now[0], wall_clock=lambda: wall0_s + now[0]
    )
    batch: list[MeterReading] = []
    for t in range(from_s, to_s + 1, READ_S):
        now[0] = t
        batch.append(meter.read_at(t))
        if t % POLL_S == 0:
            recorder.meter(batch)
            recorder.poll(snapshot(t, first=t == from_s))
            batch = []
    recorder.close()
    return path
