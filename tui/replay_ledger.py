"""A recording's poll windows into the energy ledger: `spectop replay FILE --ledger` (in the dashboard,
at the replay's speed) and `--no-ui` (none shown, as fast as the file reads).

The polls and meter readings go through the same LiveState and LedgerWriter as a live session's,
so each window gets the joules, tokens and verdict it got live. Pitfalls handled: windows are timed
by the RECORDING's wall clock (its header's wall time at t0_s, plus the recorded monotonic times),
never the replay's, so two recorded days land in their own hours however fast they replay; a window
already in the ledger (a replay seeked back, the file replayed again, the live session that kept
the ledger while recording) is refused by the store, so no joule is counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collectors.errors import SpectopError
from collectors.ledgerdb.store import EnergyStore, Window
from collectors.ledgerdb.writer import LedgerWriter, WindowSink
from collectors.recording.reader import MeterEntry, Recording
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import events
from collectors.sweep.records import ArmsSummary
from tui.config import Settings
from tui.state import LiveState

BATCH_WINDOWS = 2000  # windows per transaction in an import (one per poll is the live pace)


def recording_writer(recording: Recording, sink: WindowSink) -> LedgerWriter:
    """A LedgerWriter whose wall clock is the recording's: wall = wall0 + (monotonic − t0)."""
    wall0_unix_s = recording.wall0_unix_s
    if wall0_unix_s is None:
        raise SpectopError(
            f"{recording.path} does not say when it was recorded (no wall time in its header)",
            "replay it without --ledger",
        )
    return LedgerWriter(
        sink, recording.server_url, clock=lambda: recording.t0_s, wall_clock=lambda: wall0_unix_s
    )


class CountingSink:
    """Windows gathered and added to the store a batch at a time; counts what was offered and taken."""

    def __init__(self, store: EnergyStore) -> None:
        self.store = store
        self.offered = self.added = 0
        self._pending: list[Window] = []

    def add(self, windows: Sequence[Window]) -> int:
        self._pending.extend(windows)
        self.offered += len(windows)
        if len(self._pending) >= BATCH_WINDOWS:
            self.commit()
        return len(windows)

    def commit(self) -> None:
        self.added += self.store.add(self._pending)
        self._pending = []


@dataclass(frozen=True, slots=True)
class Imported:
    windows: int  # the recording's windows the meter covered
    added: int  # of them, those not in the ledger already
    first_unix_s: float | None  # the recording's span on the wall clock
    last_unix_s: float | None


def import_recording(recording: Recording, store: EnergyStore) -> Imported:
    """Feed the recording's polls, readings and sweep events to a LiveState keeping the ledger."""
    sink = CountingSink(store)
    state = LiveState(Settings().energy_window_s, recording.meter)
    state.keeper = recording_writer(recording, sink)
    try:  # Ctrl-C keeps the windows read so far: importing the file again adds the rest
        for entry in recording.entries:
            payload = entry.payload
            if isinstance(payload, ServerSnapshot):
                state.add_snapshot(payload)
            elif isinstance(payload, MeterEntry):
                for reading in payload.readings:
                    state.add_reading(reading)
            elif isinstance(payload, events.SweepStarted):
                state.sweep_started()
            elif isinstance(payload, events.IdleMeasured):
                state.ledger.known_idle_w = payload.power_w
            elif isinstance(payload, events.SweepEnded):
                # as the dashboard does: a paired sweep's rows become the verdict's reference
                summary = payload.summary
                if not isinstance(summary, ArmsSummary) and summary.rows:
                    state.sweep_summary = summary
                state.sweep_ended(recording.t0_s + entry.t_s)
    finally:
        sink.commit()
    wall0 = recording.wall0_unix_s
    span = (wall0, wall0 + recording.duration_s) if wall0 is not None else (None, None)
    return Imported(sink.offered, sink.added, *span)
