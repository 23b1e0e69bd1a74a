"""What the dashboard knows: a LiveLedger (shared with the exporter) plus the dashboard-only histories.

No Textual here, so it is unit-tested plainly. The App owns one LiveState and feeds it from its
message handlers on the UI thread; the figures themselves (rolling energy, idle, the verdict, per-request
energy) live in collectors/, so `spectop export` computes the same ones.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from collectors.energy.attribution import Attribution, AttributionBook
from collectors.live.accounting import HISTORY, LiveLedger
from collectors.live.verdict import LiveEnergy, live_energy
from collectors.meters import MeterInfo, MeterReading
from collectors.requests.record import RequestRecord
from collectors.requests.router import parse_tag
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.records import Summary

if TYPE_CHECKING:  # SQLite loads only when a ledger is kept, the schedule's code after a tune
    from collectors.ledgerdb.writer import LedgerWriter
    from collectors.tune.live import ScheduleTracker

MAX_REQUEST_ROWS = 200


class LiveState:
    """The ledger's polls and power, and what only the dashboard keeps; fed on the UI thread only."""

    def __init__(self, energy_window_s: float = 30.0, meter: MeterInfo | None = None) -> None:
        self.ledger = LiveLedger(energy_window_s, meter)
        self.tok_s: deque[float] = deque(maxlen=HISTORY)
        self.power_w: deque[float] = deque(maxlen=HISTORY)
        self.book = AttributionBook(MAX_REQUEST_ROWS)  # spectop's own requests and their energy
        self.sweep_summary: Summary | None = None
        self.sweep_running = False
        self.paused = False
        self.slot_tok_s: dict[int, float] = {}  # busy slot -> tokens/s since the previous poll
        self.keeper: LedgerWriter | None = None  # writes the energy ledger (--ledger), where kept
        self.count_unseen = (
            True  # the server's token counts tell unseen traffic (not when routed: tui/routing.py)
        )
        self.schedule: ScheduleTracker | None = None  # counts a tuned schedule's saving (--schedule)

    @property
    def records(self) -> OrderedDict[str, RequestRecord]:
        return self.book.records

    @property
    def latest(self) -> ServerSnapshot | None:
        return self.ledger.latest

    def add_snapshot(self, snap: ServerSnapshot) -> None:
        prev = self.ledger.latest
        self.ledger.add_snapshot(snap)
        if snap.live_tok_s is not None:
            self.tok_s.append(snap.live_tok_s)
        self.slot_tok_s = slot_rates(prev, snap)
        self.keep()

    def add_reading(self, reading: MeterReading) -> bool:
        """Store one meter reading; False when it gave no power point (see LiveLedger.add_reading)."""
        point = self.ledger.add_reading(reading)
        if point is not None:
            self.power_w.append(point.power_w)
            self.keep()
        return point is not None

    def keep(self) -> None:
        """The windows the meter now covers, to the energy ledger (judged only outside a sweep) and
        to the schedule's saving (counted only outside a sweep)."""
        if self.keeper is not None:
            self.keeper.summary = None if self.sweep_running else self.sweep_summary
            self.keeper.flush(self.ledger)
        if self.schedule is not None and not self.sweep_running:
            self.schedule.update(self.ledger)

    def add_record(self, record: RequestRecord) -> None:
        if parse_tag(record.tag) is not None:  # routed: the book holds two servers' requests, and
            self.count_unseen = False  # one server's counts cannot tell what neither was sent
        self.book.add(record)  # its figure, and those of the records it overlaps, on the next settle

    def settle_attribution(self) -> bool:
        """Recompute the energy of new records' groups and of records the meter has now read past.

        True when a figure changed (the requests table needs them again).
        """
        return self.book.settle(self.ledger.power, self.ledger.snapshots if self.count_unseen else ())

    def attribution(self) -> Mapping[str, Attribution]:
        """Each record's share of the meter's energy, settled first."""
        self.settle_attribution()
        return self.book.results

    def sweep_started(self) -> None:
        self.sweep_running = True

    def sweep_ended(self, t_s: float) -> None:
        self.sweep_running = False
        self.ledger.live_since_s = t_s

    def drafting(self) -> ServerSnapshot | None:
        """Acceptance, G, width and S_j over the rolling window (one poll's window is often empty)."""
        return self.ledger.drafting()

    def energy(self) -> LiveEnergy:
        energy = live_energy(self.ledger, self.sweep_summary, self.sweep_running)
        if self.schedule is None:
            return energy
        return replace(energy, schedule=self.schedule.view(self.ledger))


def slot_rates(prev: ServerSnapshot | None, cur: ServerSnapshot) -> dict[int, float]:
    """Tokens per second of each slot busy in both polls (a lower count means a new task: skipped)."""
    if prev is None or not cur.window_s:
        return {}
    before = dict(prev.busy_slot_tokens)
    return {
        slot: (n - before[slot]) / cur.window_s
        for slot, n in cur.busy_slot_tokens
        if slot in before and n >= before[slot]
    }
