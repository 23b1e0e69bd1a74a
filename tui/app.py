"""SpectopApp: start the workers and route their messages into the state and onto the dashboard screen.

The workers (tui/workers.py) only post messages, the App routes them, the DashboardScreen
renders: each handler updates `self.state` and calls only the screen methods its message affects
(a meter read touches the requests table only when it completes a request's energy: one the meter
had not yet read past). Were the poller itself to fail, the top bar would not stay at "ok".

Repaints, not figures, are what the dashboard spends its CPU on. While polling runs, meter reads
(every 0.5 s) go into the state at once but repaint the power and energy panels at most once per
`LIVE_REPAINT_S`; a poll repaints them with everything else, a meter error or a pause at once, so
what is shown is never more than a second behind. With polling off (tests, snapshots) every
message repaints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from textual import on
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Button
from textual.worker import Worker, WorkerState

from collectors.fmt import num, pct, printable
from collectors.log_requests import LogRecords
from collectors.meters import Sampler
from collectors.sweep.events import IdleMeasured, PointDone, SweepEnded
from collectors.verdict import void_warning
from tui import messages
from tui.config import Settings
from tui.screens.dashboard import DashboardScreen
from tui.state import LiveState
from tui.widgets.help_screen import HelpScreen
from tui.widgets.sweep_dialog import SavedRun, SweepDialog, SweepRequest, arm_field
from tui.widgets.sweep_panel import is_arms, sweep_headline
from tui.workers import WorkingApp

LIVE_REPAINT_S = 1.0  # the least time between two repaints of power and energy by meter reads


class SpectopApp(WorkingApp):
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
    ) -> None:
        super().__init__()
        self.settings, self.collector, self.sampler = settings, collector, sampler
        self.on_sweep = on_sweep  # told when a sweep starts and ends (the demo pauses its traffic)
        self.title = settings.title
        self.state = LiveState(settings.energy_window_s, sampler.meter.info if sampler else None)
        self.meter_error: str | None = None
        self._meter_t_s: float | None = None
        self._clock = clock
        self._live_painted_s: float | None = None  # when power and energy were last repainted
        self._live_stale = False  # the state holds readings the power and energy panels do not show yet
        self.log_records = LogRecords(settings.server_url)  # requests read from --server-log

    def get_default_screen(self) -> DashboardScreen:
        return DashboardScreen(self.settings.server_url, self.sampler.meter.info if self.sampler else None)

    def on_mount(self) -> None:
        self.on_resize()
        with self.batch_update():  # the tables and the latency tab start empty: nothing to show there
            self.show_sources()
            self.paint_live()
        if self.settings.poll:
            self.poll_server()
            if self.sampler is not None:
                self.set_interval(0.5, self.read_meter)
        if self.settings.server_log:
            self.follow_server_log()

    def on_resize(self, event: object = None) -> None:
        self.main.set_class(self.size.width < 120, "narrow")
        self.main.set_class(self.size.height < 40, "short")

    # -- handlers: own the state, tell the screen what changed ---------------------------------
    def on_server_polled(self, message: messages.ServerPolled) -> None:
        if not self.screen_stack:
            return  # torn down: a late message has nowhere to go
        snap = message.snapshot
        self.state.add_snapshot(snap)
        with self.batch_update():
            warning = self.show_sources()
            self.main.show_snapshot(snap, self.state.drafting() or snap, self.state.tok_s, warning)
            self.paint_live()  # the idle baseline comes from idle polls
            self.main.show_slots(snap, self.state.slot_tok_s)

    def on_meter_read(self, message: messages.MeterRead) -> None:
        if not self.screen_stack:
            return
        for reading in message.readings:
            self.state.add_reading(reading)
        changed_error = message.error != self.meter_error
        self.meter_error = message.error
        self._live_stale = self._live_stale or bool(message.readings)
        with self.batch_update():
            if changed_error:
                self.show_sources()
            if changed_error or self.live_paint_due():
                self.paint_live()
            if self.state.settle_attribution():  # records that waited for the meter to read past them
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

    def on_sweep_progressed(self, message: messages.SweepProgressed) -> None:
        if not self.screen_stack:
            return
        event = message.event
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
        self.main.show_energy(self.state.energy())
        if self.on_sweep:
            self.on_sweep(False)

    # -- what the handlers hand the screen -----------------------------------------------------
    def show_sources(self) -> str | None:
        """The source bar; returns the void-draft warning, which the drafting panel shows too."""
        s, state = self.settings, self.state
        warning = void_warning(s.server_url, s.draft_url, s.draft_cmd, state.latest)
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
        self.main.show_energy(self.state.energy())

    def show_power(self) -> None:
        power_w = self.state.power_w[-1] if self.state.power_w else None
        idle_w = self.state.ledger.idle_w()
        self.main.show_power(power_w, idle_w, self.state.power_w, self.meter_error)

    # -- actions -------------------------------------------------------------------------------
    def action_sweep(self) -> None:
        if any(w.group == "sweep" and w.is_running for w in self.workers):
            self.notify("a sweep is running: press c to cancel it", severity="warning")
            return
        s = self.settings
        dialog = SweepDialog(
            s.quick_plan,
            s.sweep_plan,
            arm_field(s.plain_url, s.plain_cmd),
            arm_field(s.draft_url, s.draft_cmd),
        )
        self.push_screen(dialog, self.start_sweep)

    def keep_sweep_summary(self, summary: dict) -> None:  # paired: the live verdict; arms: width advice
        if is_arms(summary):
            self.main.drafting_panel.set_round_energy(summary.get("round_energy_mj"))
        elif summary["rows"]:
            self.state.sweep_summary = summary

    def start_sweep(self, request: SweepRequest | SavedRun | None) -> None:
        if isinstance(request, SavedRun):  # a finished run, shown from its folder
            self.action_tab("sweep")
            self.keep_sweep_summary(request.summary)
            return self.main.sweep_panel.show_saved(request.summary, str(request.run_dir))
        if request is None:
            return
        self.action_tab("sweep")
        self.main.set_sweep_running(True)
        self.state.sweep_started()
        self.main.show_energy(self.state.energy())
        if self.on_sweep:
            self.on_sweep(True)
        self.sweep_worker(request)

    @on(Button.Pressed, "#sweep-run")
    def sweep_button(self) -> None:
        self.action_sweep()

    @on(Button.Pressed, "#sweep-cancel")
    def action_cancel_sweep(self) -> None:
        self.workers.cancel_group(self, "sweep")
        self.main.show_sweep_status("cancelling: the point in flight is dropped…", "yellow")

    def action_probe(self) -> None:
        self.notify("probing the server…", title="probe", timeout=2)
        self.run_probe()

    def action_pause(self) -> None:
        self.state.paused = not self.state.paused
        self.show_sources()
        if self._live_stale:  # no poll or meter read comes while paused to show what arrived last
            self.paint_live()

    def action_toggle_panels(self) -> None:
        self.main.toggle_panels()

    def action_tab(self, tab: str) -> None:
        self.main.select_tab(tab)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Run a sweep", "Paired plain-versus-draft sweep over batch sizes", self.action_sweep
        )
        yield SystemCommand(
            "Cancel the sweep",
            "Stop the running sweep; completed points stay on disk",
            self.action_cancel_sweep,
        )
        yield SystemCommand(
            "Probe the server", "Send one streamed request and show its figures", self.action_probe
        )
        yield SystemCommand("Pause or resume", "Stop or restart live updates", self.action_pause)
        yield SystemCommand(
            "Show or hide the live panels", "More room for the tables", self.action_toggle_panels
        )

    @property
    def main(self) -> DashboardScreen:
        """The dashboard screen, also while a dialog or the help is on top of it."""
        return self.screen_stack[0]  # type: ignore[return-value]
