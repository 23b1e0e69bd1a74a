"""After a tune: which setting is in effect on the watched server, and the energy the schedule
saved against always-draft so far this session.

UI-free, so the dashboard's energy panel and the exporter say the same. Each poll window the meter
covers is taken once (as the energy ledger takes them, collectors/ledgerdb/writer.py): its joules E
at its batch level b were spent on the schedule's arm there; always-draft would have spent
E × A(b) / S(b), A and S the sweep's always-draft and scheduled-arm mJ/token read at b (linear in
log B between the schedule's levels, clamped at the ends). The ratio, not the sweep's absolute
mJ/token, carries over to the live machine. Where the schedule runs always-draft's own K the
saving is exactly 0. The setting is read back where the server says what it runs now (SGLang's
`spec_num_steps` gauge, `ServerSnapshot.spec_num_steps`); elsewhere it is "as tuned, not read
back". A window whose read-back K differs from the schedule's is not counted, and the view says so.
Pitfall handled: windows before `live_since_s` (a sweep's traffic) are never counted.
"""

from __future__ import annotations

import itertools

from collectors.ledgerdb.writer import batch_level
from collectors.live.accounting import LiveLedger
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.rule import at_batch
from collectors.tune.ranges import k_ranges
from collectors.tune.schedule import DraftSchedule
from collectors.tune.view import NOT_IN_EFFECT, NOT_READ_BACK, READ_BACK, ScheduleView


def setting_text(schedule: DraftSchedule) -> str:
    """The schedule in short, its last range open-ended: "K 4 at 1-3, off from 4"."""
    ranges = k_ranges(schedule)
    parts = []
    for i, r in enumerate(ranges):
        what = f"K {r.k}" if r.k else "off"
        if i == len(ranges) - 1:
            span = f"from {r.first}"
        else:
            span = f"at {r.first}" if r.first == r.last else f"at {r.first}-{r.last}"
        parts.append(f"{what} {span}")
    return ", ".join(parts)


class ScheduleTracker:
    """One watched server's schedule and the saving counted so far; call `update` after each poll."""

    def __init__(self, schedule: DraftSchedule) -> None:
        self.schedule = schedule
        levels = schedule.levels
        self._always = [(lv.batch, lv.always_mj_per_token) for lv in levels if lv.always_mj_per_token]
        self._curves: dict[str, list[tuple[int, float]]] = {"plain": []}
        for lv in levels:
            if lv.plain_mj_per_token:
                self._curves["plain"].append((lv.batch, lv.plain_mj_per_token))
            if lv.mj_per_token and lv.arm not in ("plain", schedule.always_arm):
                self._curves.setdefault(lv.arm, []).append((lv.batch, lv.mj_per_token))
        self._done_until_s = float("-inf")
        self.saved_j = self.always_j = 0.0
        self.windows = 0
        self.mismatched = 0

    def ratio_at(self, batch: int) -> float | None:
        """Always-draft's mJ/token over the scheduled arm's at `batch`; 1 where they are one arm."""
        arm = self.schedule.level_at(batch).arm
        if arm == self.schedule.always_arm:
            return 1.0
        always, scheduled = at_batch(self._always, batch), at_batch(self._curves.get(arm, []), batch)
        return always / scheduled if always and scheduled else None

    def update(self, live: LiveLedger) -> None:
        """Count the windows the meter now covers that were not counted yet."""
        if not live.power:
            return
        covered_until_s, covered_from_s = live.power[-1].t_s, live.power[0].t_s
        pending = list(
            itertools.takewhile(lambda s: s.taken_at_s > self._done_until_s, reversed(live.snapshots))
        )
        for snap in reversed(pending):
            if snap.taken_at_s > covered_until_s:
                break  # the meter has not reached this window's end yet
            self._done_until_s = snap.taken_at_s
            self._count(live, snap, covered_from_s)

    def _count(self, live: LiveLedger, snap: ServerSnapshot, covered_from_s: float) -> None:
        if not snap.ok or not snap.window_s or not snap.window_tokens:
            return
        t0_s = snap.taken_at_s - snap.window_s
        if t0_s < max(covered_from_s, live.live_since_s):
            return
        batch = batch_level(snap)
        if snap.spec_num_steps is not None and snap.spec_num_steps != self.schedule.k_at(batch):
            self.mismatched += 1
            return
        energy_j = live.energy_between_j(t0_s, snap.taken_at_s)
        ratio = self.ratio_at(batch)
        if energy_j is None or energy_j < 0 or ratio is None:
            return
        self.windows += 1
        self.always_j += energy_j * ratio
        self.saved_j += energy_j * (ratio - 1.0)

    def view(self, live: LiveLedger) -> ScheduleView:
        latest = live.latest
        batch = batch_level(latest) if latest is not None and latest.ok and latest.window_tokens else None
        k = self.schedule.k_at(batch) if batch is not None else None
        running = latest.spec_num_steps if latest is not None else None
        if running is None:
            said = NOT_READ_BACK
        else:
            said = READ_BACK if k is None or running == k else NOT_IN_EFFECT
        return ScheduleView(
            setting_text(self.schedule),
            batch,
            k,
            running,
            said,
            self.saved_j,
            self.always_j,
            self.windows,
            self.mismatched,
        )
