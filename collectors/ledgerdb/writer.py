"""Poll windows into the energy ledger: each window's joules, tokens and drafting, once the meter covers it.

A poll's window is (previous poll, this poll]; its joules are the meter's counter across it
(collectors/energy/ledger.py `window_energy_j`), so windows that follow each other add up to the
counter's difference (collectors/docs/energy-ledger.md, Eq. 3). Pitfalls handled: the meter is read on
its own schedule, so a window waits until a reading at or after its end has arrived (then it is
written, never extrapolated); a window the meter began after is never written; a counter that ran
back gives no joules for its window (skipped, not negative); a window is timed by the wall clock
through one offset per writer, so consecutive windows meet exactly and the store can keep them
disjoint across restarts (collectors/ledgerdb/store.py). A live writer holds its windows
`HOLD_S` of polls before writing them in one transaction (one per poll was a tenth of `spectop
export`'s CPU); `write_held` writes the rest when watching stops, so a stop loses none and a crash
at most `HOLD_S`.

The verdict per window is the live one (collectors/live/verdict.py): the rolling mJ/token against
the last sweep's plain curve at the current batch. Where drafting costs more than plain (ratio r
above the sweep rule's even band), switching it off would have used 1/r of the window's joules:
`saving_j = energy_j × (1 − 1/r)`.
"""

from __future__ import annotations

import bisect
import itertools
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from collectors.ledgerdb.store import Window
from collectors.live.accounting import LiveLedger
from collectors.live.verdict import curve_at
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.records import Summary
from collectors.sweep.rule import Verdict, classify

HOLD_S = 10.0  # of polls: how long a live writer holds windows before writing them together


class WindowSink(Protocol):
    """Where windows go: an EnergyStore, or a BackgroundStore in front of one."""

    def add(self, windows: Sequence[Window]) -> int: ...


class LedgerWriter:
    """Writes one server's poll windows from its LiveLedger into the store; call `flush` after each poll."""

    def __init__(
        self,
        store: WindowSink,
        server: str,
        summary: Summary | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        hold_s: float = 0.0,
    ) -> None:
        self.store, self.server, self.summary, self.hold_s = store, server, summary, hold_s
        self._wall_minus_mono_s = wall_clock() - clock()
        self._done_until_s = float("-inf")  # monotonic end of the last window handled
        self._held: list[Window] = []
        self._held_since_s = 0.0  # monotonic end of the first window held
        self.problem: str | None = None  # the last write's failure, if any

    def flush(self, live: LiveLedger) -> int:
        """Take the windows the meter now covers; write them (with those held) once the first held
        ends `hold_s` before the last poll taken. Returns how many the store took now."""
        self._hold_covered(live)
        if not self._held or self._done_until_s - self._held_since_s < self.hold_s:
            return 0
        return self.write_held()

    def write_held(self) -> int:
        """Write the windows held; returns how many the store took. Call it when watching stops."""
        windows, self._held = self._held, []
        if not windows:
            return 0
        try:
            return self.store.add(windows)
        except sqlite3.Error as exc:  # a full disk or a locked file must not stop the exporter's loop
            self.problem = f"energy ledger: {exc}"
            return 0

    def _hold_covered(self, live: LiveLedger) -> None:
        """Hold the windows of the polls not handled yet that the meter now covers."""
        if not live.power:
            return
        covered_until_s, covered_from_s = live.power[-1].t_s, live.power[0].t_s
        # the polls not handled yet are the last few: walk back to them, not over the whole history
        pending = list(
            itertools.takewhile(lambda s: s.taken_at_s > self._done_until_s, reversed(live.snapshots))
        )
        for snap in reversed(pending):
            if snap.taken_at_s > covered_until_s:
                break  # the meter has not reached this window's end yet: wait for it
            self._done_until_s = snap.taken_at_s
            window = self._window(live, snap, covered_from_s)
            if window is not None:
                if not self._held:
                    self._held_since_s = snap.taken_at_s
                self._held.append(window)

    def _window(self, live: LiveLedger, snap: ServerSnapshot, covered_from_s: float) -> Window | None:
        if not snap.ok or not snap.window_s or snap.taken_at_s - snap.window_s < covered_from_s:
            return None
        t0_s, t1_s = snap.taken_at_s - snap.window_s, snap.taken_at_s
        points = live.power
        inside = itertools.islice(points, bisect.bisect_right(points, t0_s, key=lambda p: p.t_s), None)
        if any(p.fault for p in itertools.takewhile(lambda p: p.t_s <= t1_s, inside)):
            return None  # the counter ran back inside: its difference is no measurement
        energy_j = live.energy_between_j(t0_s, t1_s)
        if energy_j is None or energy_j < 0:
            return None
        tokens = snap.window_tokens or 0
        judged_s = paid_s = saving_j = 0.0
        ratio = self._drafting_ratio(live) if snap.drafting else None
        if ratio is not None:
            judged_s = snap.window_s
            kind = classify(ratio)
            paid_s = snap.window_s if kind is Verdict.SAVES else 0.0
            saving_j = energy_j * (1 - 1 / ratio) if kind is Verdict.COSTS else 0.0
        return Window(
            server=self.server or snap.url,  # a feed made before its first poll knows no URL yet
            start_unix_s=t0_s + self._wall_minus_mono_s,
            end_unix_s=t1_s + self._wall_minus_mono_s,
            batch_level=batch_level(snap) if tokens else 0,
            energy_j=energy_j,
            tokens=tokens,
            drafted=snap.window_drafted or 0,
            accepted=snap.window_accepted or 0,
            drafting_s=snap.window_s if snap.drafting else 0.0,
            judged_s=judged_s,
            paid_s=paid_s,
            saving_j=saving_j,
        )

    def _drafting_ratio(self, live: LiveLedger) -> float | None:
        """Live drafting mJ/token over the sweep's plain curve at the current batch (the live verdict's)."""
        if self.summary is None:
            return None
        batch, mj_per_token = live.current_batch(), live.rolling().mj_per_token
        if batch is None or mj_per_token is None:
            return None
        plain = curve_at(self.summary, "plain", batch)
        return mj_per_token / plain if plain else None


def batch_level(snap: ServerSnapshot) -> int:
    """Requests per decode over the window, to the nearest whole request (at least 1 when it worked)."""
    if snap.busy_slots_per_decode:
        return max(1, round(snap.busy_slots_per_decode))
    return max(1, snap.slots_busy or 0)
