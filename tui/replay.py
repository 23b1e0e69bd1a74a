"""ReplayApp: a recording (collectors/recording/writer.py) played back in the dashboard as it happened.

The recorded polls, meter readings, request records and sweep events go through SpectopApp's own
handlers, in order, when the replay clock passes their time stamps: the same state and the same
panels as the live session, with no server polled and no meter opened. Space pauses, ←/→ seek a
few seconds, +/- change the speed. Given a ledger, the replayed windows go into it at the
recording's wall-clock hours (tui/replay_ledger.py).

Pitfalls handled: seeking back rebuilds the state from the start (the state only grows, like a
live session's), batched into one repaint; the live window a finished sweep restarts is set on the
recording's clock, not on this process's; a sweep or probe would reach a server, so in a replay
they only say why not; the file name shown is the user's text, never read as markup.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Footer, Static

from collectors.ledgerdb.writer import WindowSink
from collectors.recording.reader import Entry, MeterEntry, Recording, RequestsEntry
from collectors.servers.server_log import LogRecords
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import events
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.replay_ledger import recording_writer
from tui.state import LiveState

SEEK_S = 5.0
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
TICK_S = 0.1


class ReplayApp(SpectopApp):
    BINDINGS = [
        Binding("space", "pause", "Pause/play", priority=True),
        Binding("left", "seek(-5)", "−5 s", key_display="←", priority=True),
        Binding("right", "seek(5)", "+5 s", key_display="→", priority=True),
        Binding("plus,equals_sign", "speed(1)", "Faster", key_display="+"),
        Binding("minus", "speed(-1)", "Slower", key_display="-"),
        Binding("s", "sweep", "Sweep", show=False),
        Binding("r", "probe", "Probe", show=False),
        Binding("p", "pause", "Pause", show=False),
    ]

    def __init__(
        self,
        recording: Recording,
        speed: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        ledger: WindowSink | None = None,
    ) -> None:
        settings = Settings(
            server_url=recording.server_url, title=f"spectop replay {recording.path.name}", poll=False
        )
        self.recording = recording
        super().__init__(settings, None, None, clock=clock)
        # the recorded meter's info, shown and used by its plausibility checks (no sampler is opened)
        self.fleet.watched.state = LiveState(settings.energy_window_s, recording.meter)
        # one writer for the whole replay: after a seek back it skips the windows it wrote already
        self.fleet.watched.state.keeper = recording_writer(recording, ledger) if ledger else None
        self._clock = clock
        self.speed = speed
        self.position_s = 0.0
        self.playing = True
        self._next = 0  # index of the first entry not fed yet
        self._ticked_s = clock()
        self.replay_bar = Static(id="replay-bar")
        self.replay_bar.styles.height = 1

    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self.mount_replay_bar)  # the dashboard composes after the app mounts
        self.show_position()
        self.set_interval(TICK_S, self.tick)

    def mount_replay_bar(self) -> None:
        self.main.mount(self.replay_bar, before=self.main.query_one(Footer))

    # -- the replay clock ------------------------------------------------------------------------
    def tick(self) -> None:
        now_s = self._clock()
        elapsed_s, self._ticked_s = now_s - self._ticked_s, now_s
        if self.playing and self.position_s < self.recording.duration_s:
            self.play_to(self.position_s + elapsed_s * self.speed)

    def play_to(self, t_s: float) -> None:
        """Feed every entry up to `t_s` (seconds into the recording); back in time rebuilds from the start."""
        t_s = min(max(0.0, t_s), self.recording.duration_s)
        if t_s < self.position_s:
            self.restart()
        entries = self.recording.entries
        with self.batch_update():
            while self._next < len(entries) and entries[self._next].t_s <= t_s:
                self.feed(entries[self._next])
                self._next += 1
        self.position_s = t_s
        self.show_position()

    def restart(self) -> None:
        keeper = self.state.keeper
        self.fleet.watched.state = LiveState(self.settings.energy_window_s, self.recording.meter)
        self.state.keeper = keeper
        self.state.paused = not self.playing
        self.log_records = LogRecords(self.settings.server_url)
        self.fleet.watched.meter_error = None
        self._next, self.position_s = 0, 0.0
        with self.batch_update():
            self.main.show_records([], {})
            self.main.set_sweep_running(False)
            self.live.show_sources(self.main)
            self.live.paint(self.main)

    def feed(self, entry: Entry) -> None:
        """One recorded arrival, through the handler a live session gives it to."""
        payload = entry.payload
        if isinstance(payload, ServerSnapshot):
            self.on_server_polled(messages.ServerPolled(payload))
        elif isinstance(payload, MeterEntry):
            self.on_meter_read(messages.MeterRead(list(payload.readings), payload.error))
        elif isinstance(payload, RequestsEntry):
            self.add_records(payload.records)
        else:
            if isinstance(payload, events.SweepStarted):  # what SweepController.started does live
                self.state.sweep_started()
                self.main.set_sweep_running(True)
            self.on_sweep_progressed(messages.SweepProgressed(payload))
            if isinstance(payload, events.SweepEnded):
                self.main.set_sweep_running(False)
                self.state.ledger.live_since_s = self.recording.t0_s + entry.t_s

    def show_position(self) -> None:
        duration_s = self.recording.duration_s
        if self.position_s >= duration_s:
            state = "ended"
        else:
            state = "playing" if self.playing else "paused"
        self.replay_bar.update(
            Text.assemble(
                ("replay ", "bold"),
                self.recording.path.name,
                f"  {self.position_s:.1f} s of {duration_s:.1f} s  ×{self.speed:g}  {state}",
                ("  space pause · ←/→ 5 s · +/- speed", "dim"),
            )
        )

    # -- keys ----------------------------------------------------------------------------------
    def action_pause(self) -> None:
        self.playing = not self.playing
        self._ticked_s = self._clock()
        self.state.paused = not self.playing
        self.live.show_sources(self.main)
        self.show_position()

    def action_seek(self, seconds: float) -> None:
        self.play_to(self.position_s + float(seconds))

    def action_speed(self, step: int) -> None:
        lower = [i for i, s in enumerate(SPEEDS) if s <= self.speed]
        at = lower[-1] if lower else 0
        self.speed = SPEEDS[min(max(0, at + int(step)), len(SPEEDS) - 1)]
        self.show_position()

    def action_sweep(self) -> None:
        self.notify("a replay shows a recorded session: no server to sweep", severity="warning")

    def action_probe(self) -> None:
        self.notify("a replay shows a recorded session: no server to probe", severity="warning")
