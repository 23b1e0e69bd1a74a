"""SpectopApp: start the workers and route their messages into the state and onto the dashboard screen.

The workers (tui/workers.py) only post messages, the App routes them, the DashboardScreen
renders: each handler updates `self.state` and calls only the screen methods its message affects
(a meter read touches the requests table only when it completes a request's energy: one the meter
had not yet read past). Were the poller itself to fail, the top bar would not stay at "ok".

Repaints, not figures, are what the dashboard spends its CPU on. While polling runs, meter reads
(every 0.5 s) go into the state at once but repaint the power and energy panels at most once per
`LIVE_REPAINT_S`; a poll repaints them with everything else, a meter error or a pause at once, so
what is shown is never more than a second behind. With polling off (tests, snapshots) every
message repaints. Several servers: a LiveState each, fed by the messages naming it (tui/fleet_app.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from textual import on
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from collectors.fmt import num, pct, printable
from collectors.log_requests import LogRecords
from collectors.meters import Sampler
from collectors.proxy_record import with_busy
from collectors.recording import Recorder
from collectors.sweep.events import IdleMeasured, PointDone, SweepEnded
from collectors.verdict import void_warning
from tui import messages
from tui.actions import ActionsApp
from tui.config import Settings
from tui.fleet import WatchedServer
from tui.screens.dashboard import DashboardScreen
from tui.sweep_text import sweep_headline

LIVE_REPAINT_S = 1.0  # the least time between two repaints of power and energy by meter reads


class SpectopApp(ActionsApp):
    CSS_PATH = "app.tcss"
    TITLE = "spectop"
    BINDINGS = [
        Binding("s", "sweep", "Sweep"),
        Binding("c", "cancel_sweep", "Cancel sweep", show=False),
        Binding("r", "probe", "Probe"),
        Binding("p", "pause", "Pause"),
        Binding("z", "toggle_panels", "Panels", show=False),
        Binding("1", "tab('requests')", "Requests", show=False),
        Binding("2", "tab('latency')", "Latency", show=False),
        Binding("3", "tab('sweep')", "Sweep tab", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        settings: Settings,
        collector,
        sampler: Sampler | None,
        on_sweep: Callable[[bool], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        fleet: Sequence[WatchedServer] = (),
        recorder: Recorder | None = None,
    ) -> None:
        """One server (`collector`, `sampler`), or several (`fleet`, whose first is then shown first)."""
        super().__init__()
        self.settings = settings
        self.on_sweep = on_sweep  # told when a sweep starts and ends (the demo pauses its traffic)
        self.title = settings.title
        one = [WatchedServer.of(settings.server_url, collector, sampler, settings.energy_window_s)]
        self.servers = list(fleet) or one
        self.selected = 0
        self.recorder = recorder  # --record (one server): every handler below writes what it was given
        self._clock = clock
        self._live_painted_s: float | None = None  # when power and energy were last repainted
        self._live_stale = False  # the state holds readings the power and energy panels do not show yet
        self.log_records = LogRecords(settings.server_url)  # requests read from --server-log

    def get_default_screen(self) -> DashboardScreen:
        return DashboardScreen(self.watched.url, self.meter_info(), [s.name for s in self.servers])

    def on_mount(self) -> None:
        self.on_resize()
        with self.batch_update():  # the tables and the latency tab start empty: nothing to show there
            self.show_sources()
            self.paint_live()
        if self.settings.poll:
            self.poll_server()
            if any(server.sampler is not None for server in self.servers):
                self.set_interval(0.5, self.read_meter)
        if self.settings.server_log:
            self.follow_server_log()
        if self.settings.proxy:
            self.run_proxy()

    def on_resize(self, event: object = None) -> None:
        self.main.set_class(self.size.width < 120, "narrow")
        self.main.set_class(self.size.height < 40, "short")

    # -- handlers: own the state, tell the screen what changed ---------------------------------
    def on_server_polled(self, message: messages.ServerPolled) -> None:
        if not self.screen_stack:
            return  # torn down: a late message has nowhere to go
        if self.recorder:
            self.recorder.poll(message.snapshot)
        self.servers[message.server].state.add_snapshot(snap := message.snapshot)
        if message.server != self.selected:
            self.show_fleet()
            return
        with self.batch_update():
            warning = self.show_sources()
            self.main.show_snapshot(snap, self.state.drafting() or snap, self.state.tok_s, warning)
            self.paint_live()  # the idle baseline comes from idle polls
            self.main.show_slots(snap, self.state.slot_tok_s)

    def on_meter_read(self, message: messages.MeterRead) -> None:
        if not self.screen_stack:
            return
        server = self.servers[message.server]
        changed_error = message.error != server.meter_error
        if self.recorder and (message.readings or changed_error):
            self.recorder.meter(message.readings, message.error)
        for reading in message.readings:
            server.state.add_reading(reading)
        server.meter_error = message.error
        self._live_stale = self._live_stale or bool(message.readings)
        shown = message.server == self.selected
        with self.batch_update():
            if changed_error and shown:
                self.show_sources()
            if changed_error or self.live_paint_due():
                self.paint_live()
            if server.state.settle_attribution() and shown:  # records the meter has now read past
                self.main.show_records(self.state.records.values(), self.state.attribution())

    def on_probe_finished(self, message: messages.ProbeFinished) -> None:
        if message.record is None:
            error = printable(message.error or "probe failed", keep_newlines=True)
            self.notify(error, title="probe", severity="error", markup=False)
            return
        self.add_records([message.record])
        r = message.record
        self.notify(
            f"{r.committed_tokens} tokens, {num(r.tok_s)} tok/s, acceptance {pct(r.acceptance)}",
            title="probe",
            markup=False,
        )

    def on_log_requests_read(self, message: messages.LogRequestsRead) -> None:
        ledger = self.state.ledger
        self.add_records(
            self.log_records.new_records(
                message.requests, self.state.records.values(), ledger.busy_slots_during
            )
        )

    def on_proxy_request_recorded(self, message: messages.ProxyRequestRecorded) -> None:
        # a log row of the same request is left out when it comes (LogRecords.new_records): the
        # log reader holds its rows past their end, so this record, which has gap tails, is first
        r = message.record
        self.add_records([with_busy(r, self.state.ledger.busy_slots_during(r.t_send_s, r.t_done_s))])

    def on_sweep_progressed(self, message: messages.SweepProgressed) -> None:
        if not self.screen_stack:
            return
        event = message.event
        if self.recorder:
            self.recorder.sweep(event)  # a finished point's records are recorded by add_records
        with self.batch_update():
            self.main.show_sweep_event(event)
            if isinstance(event, IdleMeasured):
                self.state.ledger.known_idle_w = event.power_w
                self.paint_live()
            elif isinstance(event, PointDone):
                self.add_records(event.records)
            elif isinstance(event, SweepEnded):
                self.keep_sweep_summary(event.summary)
                self.sweep_ended()
                self.notify(
                    sweep_headline(event.summary),
                    title="sweep finished" if not event.error else "sweep stopped",
                    severity="error" if event.error else "information",
                    markup=False,
                )

    def add_records(self, records: Iterable) -> None:
        records = list(records)  # every record reaches the state here: own, logged, proxied, a sweep's
        if self.recorder:
            self.recorder.requests(records)
        for record in records:
            self.state.add_record(record)
        if self.screen_stack:
            self.main.show_records(self.state.records.values(), self.state.attribution())

    @on(Worker.StateChanged)
    def report_worker_error(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = printable(str(event.worker.error), keep_newlines=True)  # may quote the server
            self.notify(error, title=event.worker.group, severity="error", markup=False)
            if event.worker.group == "poll-server" and isinstance(event.worker.error, Exception):
                self.post_message(messages.ServerPolled(self.failed_poll(event.worker.error)))
            if event.worker.group == "sweep" and self.screen_stack:
                self.main.set_sweep_running(False)
                self.sweep_ended()

    def sweep_ended(self) -> None:
        self.state.sweep_ended(time.monotonic())
        self.main.show_energy(self.energy())
        if self.on_sweep:
            self.on_sweep(False)

    # -- what the handlers hand the screen -----------------------------------------------------
    def show_sources(self) -> str | None:
        """The source bar; returns the void-draft warning, which the drafting panel shows too."""
        s, state = self.settings, self.state
        warning = void_warning(self.watched.url, s.draft_url, s.draft_cmd, state.latest)
        self.main.show_sources(state.latest, self.meter_error, state.paused, warning)
        return warning

    def live_paint_due(self) -> bool:
        """A meter read repaints when polling is off, or when its readings have waited long enough."""
        if not self.settings.poll or self._live_painted_s is None:
            return True
        return self._live_stale and self._clock() - self._live_painted_s >= LIVE_REPAINT_S

    def paint_live(self) -> None:
        """Power and energy as the state has them now."""
        self._live_painted_s, self._live_stale = self._clock(), False
        self.show_power()
        self.main.show_energy(self.energy())
        self.show_fleet()

    def show_power(self) -> None:
        power_w = self.state.power_w[-1] if self.state.power_w else None
        idle_w = self.state.ledger.idle_w()
        self.main.show_power(power_w, idle_w, self.state.power_w, self.meter_error)

    @property
    def main(self) -> DashboardScreen:
        """The dashboard screen, also while a dialog or the help is on top of it."""
        return self.screen_stack[0]  # type: ignore[return-value]
