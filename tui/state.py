"""What the dashboard knows, and the pure figures it shows: no Textual here, so it is unit-tested plainly.

The App owns one LiveState; message handlers feed it, widgets are given views computed from it.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from collectors import ledger
from collectors.live import HISTORY, LiveLedger
from collectors.model import RequestRecord
from collectors.servers.snapshot import ServerSnapshot

MAX_REQUEST_ROWS = 200


@dataclass(frozen=True, slots=True)
class EnergyView:
    """Live energy per token over the rolling window, and the verdict against the last sweep."""

    window_s: float | None
    mj_per_token: float | None
    net_mj_per_token: float | None
    tokens: int
    batch: float | None
    verdict: str


class LiveState(LiveLedger):
    """The ledger's histories plus what only the dashboard keeps; fed on the UI thread only."""

    def __init__(self, energy_window_s: float = 30.0) -> None:
        super().__init__(energy_window_s)
        self.tok_s: deque[float] = deque(maxlen=HISTORY)
        self.power_w: deque[float] = deque(maxlen=HISTORY)
        self.records: OrderedDict[str, RequestRecord] = OrderedDict()
        self.attributed_mj: dict[str, float] = {}
        self.sweep_summary: dict[str, Any] | None = None
        self.sweep_running = False
        self.paused = False
        self.slot_tok_s: dict[int, float] = {}  # busy slot -> tokens/s since the previous poll

    @property
    def sweep_idle_w(self) -> float | None:
        return self.known_idle_w

    @sweep_idle_w.setter
    def sweep_idle_w(self, value: float | None) -> None:
        self.known_idle_w = value

    def add_snapshot(self, snap: ServerSnapshot) -> None:
        prev = self.latest
        super().add_snapshot(snap)
        if snap.live_tok_s is not None:
            self.tok_s.append(snap.live_tok_s)
        self.slot_tok_s = slot_rates(prev, snap)

    def add_power(self, t_s: float, power_w: float, energy_j: float) -> None:
        super().add_power(t_s, power_w, energy_j)
        self.power_w.append(power_w)

    def add_record(self, record: RequestRecord) -> None:
        self.records[record.request_id] = record
        while len(self.records) > MAX_REQUEST_ROWS:
            dropped, _ = self.records.popitem(last=False)
            self.attributed_mj.pop(dropped, None)
        self._attribute(record)

    def sweep_started(self) -> None:
        self.sweep_running = True

    def sweep_ended(self, t_s: float) -> None:
        self.sweep_running = False
        self.live_since_s = t_s

    def energy_view(self) -> EnergyView:
        batch = self.current_batch()
        if self.sweep_running:
            # the meter sees both arms of the sweep; the watched server's tokens are not all of them
            return EnergyView(None, None, None, 0, batch, "sweep running: live energy resumes after it")
        r = self.rolling()
        return EnergyView(
            r.window_s,
            r.mj_per_token,
            r.net_mj_per_token,
            r.tokens,
            batch,
            self.verdict(r.mj_per_token, batch),
        )

    def verdict(self, mj_per_token: float | None, batch: float | None) -> str:
        """Live drafting mJ/token against the last sweep's plain curve at the current batch."""
        if self.sweep_summary is None:
            return "no sweep yet: press s to measure where drafting pays"
        snap = self.latest
        if batch is None or mj_per_token is None:
            return "idle: the verdict needs traffic on the server"
        plain = curve_at(self.sweep_summary, "plain", batch)
        if plain is None:
            return "the last sweep has no plain curve to compare with"
        if snap is not None and snap.drafting is False:
            ratio = curve_ratio_at(self.sweep_summary, batch)
            if ratio is None:
                return "this server does not draft"
            return f"not drafting; at {batch:.1f} requests drafting would " + _change(ratio)
        return (
            f"drafting {_change(mj_per_token / plain)} at {batch:.1f} requests (vs the sweep's plain curve)"
        )

    def _attribute(self, record: RequestRecord) -> None:
        # split meter intervals among spectop's own requests by tokens each committed in them
        requests = [
            r for r in self.records.values() if r.t_done_s > record.t_send_s and r.t_send_s < record.t_done_s
        ]
        points = [p for p in self.power if record.t_send_s - 1 <= p.t_s <= record.t_done_s + 1]
        if len(points) < 2 or not record.committed_tokens:
            return
        activity = [
            ledger.RequestActivity(
                r.request_id, r.t_send_s, r.t_done_s, tuple((e.t_s, e.n_tokens) for e in r.events)
            )
            for r in requests
        ]
        joules, _ = ledger.attribute_energy_j([p.t_s for p in points], [p.energy_j for p in points], activity)
        self.attributed_mj[record.request_id] = 1000 * joules[record.request_id] / record.committed_tokens


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


def _change(ratio: float) -> str:
    if ratio < 1:
        return f"saves {100 * (1 - ratio):.0f} %"
    return f"costs {100 * (ratio - 1):.0f} % more"


def _interpolate(points: list[tuple[int, float]], batch: float) -> float | None:
    """Linear in log B between measured batches; clamped at the ends."""
    if not points:
        return None
    points = sorted(points)
    if batch <= points[0][0]:
        return points[0][1]
    if batch >= points[-1][0]:
        return points[-1][1]
    for (b0, v0), (b1, v1) in zip(points, points[1:]):
        if b0 <= batch <= b1:
            frac = (math.log(batch) - math.log(b0)) / (math.log(b1) - math.log(b0))
            return v0 + frac * (v1 - v0)
    return None


def curve_at(summary: dict[str, Any], arm: str, batch: float) -> float | None:
    points = [(t["batch"], t[arm]["mj_per_token"]) for t in summary["rows"] if t[arm]["mj_per_token"]]
    return _interpolate(points, batch)


def curve_ratio_at(summary: dict[str, Any], batch: float) -> float | None:
    points = [(t["batch"], t["energy_ratio"]) for t in summary["rows"] if t["energy_ratio"] and not t["void"]]
    return _interpolate(points, batch)
