"""SpectopApp: start the workers and route their messages into the state and onto the dashboard screen.

One App, composed: the servers (`Fleet`, tui/fleet.py), the sweep's dialog and marks
(`SweepController`) and the live panels' painter (tui/live_paint.py). Its `@work` methods run
tui/workers.py's functions, which only post messages; each handler updates the state (a LiveState
per server) and repaints only what its message affects. A failed poller is posted as a failed poll.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Button
from textual.worker import Worker, WorkerState

from collectors.fmt import num, pct, printable
from collectors.meters import Sampler
from collectors.servers.server_log import LogRecords
from collectors.sweep.events import IdleMeasured, PointDone, SweepEnded
from collectors.sweep.request import SavedRun, SweepRequest
from tui import messages, routing, workers
from tui.config import Settings
from tui.fleet import Fleet, WatchedServer
from tui.live_paint import LIVE_REPAINT_S, LivePainter
from tui.screens.dashboard import DashboardScreen
from tui.state import LiveState
from tui.sweep_control import SweepController
from tui.sweep_text import sweep_headline
from tui.widgets.servers_table import ServersTable

if TYPE_CHECKING:
    from textual.driver import Driver

    from collectors.recording.writer import Recorder  # made only for --record: not loaded before

PALETTE = (  # the command palette's entries: title, help, action
    ("Run a sweep", "Paired plain-versus-draft sweep over batch sizes", "sweep"),
    ("Cancel the sweep", "Stop the running sweep; completed points stay on disk", "cancel_sweep"),
    ("Probe the server", "Send one streamed request and show its figures", "probe"),
    ("Pause or resume", "Stop or restart live updates", "pause"),
    ("Show or hide the live panels", "More room for the tables", "toggle_panels"),
)


class SpectopApp(App[None]):
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
        on_idle: Callable[[float], None] | None = None,  # told once the idle baseline is known
    ) -> None:
        """One server (`collector`, `sampler`), or several (`fleet`, whose first is then shown first)."""
        super().__init__()
        self.settings, self.title = settings, settings.title
        one = [WatchedServer.of(settings.server_url, collector, sampler, settings.energy_window_s)]
        self.fleet = Fleet(list(fleet) or one)
        self.sweeps = SweepController(settings, self.fleet, on_sweep)
        self.live = LivePainter(settings, self.fleet, clock, on_idle)
        self.recorder = recorder  # --record (one server): every handler below writes what it was given
        self.log_records = LogRecords(settings.server_url)  # requests read from --server-log

    @property
    def state(self) -> LiveState:
        """The shown server's state."""
        return self.fleet.state

    @property
    def main(self) -> DashboardScreen:
        """The dashboard screen, also while a dialog or the help is on top of it."""
        return self.screen_stack[0]  # type: ignore[return-value]

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, but on Linux and macOS one whose input thread sleeps until a key comes
        (tui/driver.py); tests run headless and never reach it."""
        from tui.driver import quiet_in_place_of

        return quiet_in_place_of(super().get_driver_class())

    def get_default_screen(self) -> DashboardScreen:
        names = [s.name for s in self.fleet.servers]
        return DashboardScreen(self.fleet.watched.url, self.fleet.meter_info(), names)

    def on_mount(self) -> None:
        self.on_resize()
        with self.batch_update():  # the tables and the latency tab start empty: nothing to show there
            self.live.show_sources(self.main)
            self.live.paint(self.main)
        if self.settings.poll:
            self.poll_server()
            # polls a second apart or closer carry the meters' readings; slower ones leave the
            # power between them to a timer of its own
            if not self.meters_at_poll and any(server.sampler is not None for server in self.fleet.servers):
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
        if message.meter is not None:  # the readings up to the poll's mark, handed over with it
            self.on_meter_read(message.meter)
        if self.recorder and message.server == 0:  # routed: the drafting server's polls (tui/routing.py)
            self.recorder.poll(message.snapshot)
        self.fleet.servers[message.server].state.add_snapshot(message.snapshot)
        if message.server != self.fleet.selected:
            self.live.show_fleet(self.main)
            return
        with self.batch_update():
            self.live.show_poll(self.main)

    def on_meter_read(self, message: messages.MeterRead) -> None:
        if not self.screen_stack:
            return
        server = self.fleet.servers[message.server]
        changed_error = message.error != server.meter_error
        if self.recorder and message.server == 0 and (message.readings or changed_error):
            self.recorder.meter(message.readings, message.error)
        for reading in message.readings:
            server.state.add_reading(reading)
        server.meter_error = message.error
        if message.readings:
            self.live.stale = True
        shown = message.server == self.fleet.selected
        with self.batch_update():
            if changed_error and shown:
                self.live.show_sources(self.main)
            if changed_error or self.live.due():
                self.live.paint(self.main)
            if server.state.settle_attribution() and shown:  # records the meter has now read past
                self.main.show_records(self.state.records.values(), self.state.attribution())

    def on_probe_finished(self, message: messages.ProbeFinished) -> None:
        if message.record is None:
            error = printable(message.error or "probe failed", keep_newlines=True)
            self.notify(error, title="probe", severity="error", markup=False)
            return
        self.add_records([message.record])
        r = message.record
        said = f"{r.committed_tokens} tokens, {num(r.tok_s)} tok/s, acceptance {pct(r.acceptance, 1)}"
        self.notify(said, title="probe", markup=False)

    def on_log_requests_read(self, message: messages.LogRequestsRead) -> None:
        own, busy = self.state.records.values(), self.state.ledger.busy_slots_during
        self.add_records(self.log_records.new_records(message.requests, own, busy))

    def on_log_reader_state(self, message: messages.LogReaderState) -> None:
        self.live.log_state = (message.text, message.problem)
        self.live.show_sources(self.main)

    def on_proxy_request_recorded(self, message: messages.ProxyRequestRecorded) -> None:
        # a log row of the same request is left out when it comes (LogRecords.new_records): the
        # log reader holds its rows past their end, so this record, which has gap tails, is first
        self.add_records([routing.with_fleet_busy(self.fleet, message.record)])

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
                self.live.paint(self.main)
            elif isinstance(event, PointDone):
                self.add_records(event.records)
            elif isinstance(event, SweepEnded):
                self.sweeps.finished(event.summary, self.main)
                self.notify(
                    sweep_headline(event.summary),
                    title="sweep finished" if not event.error else "sweep stopped",
                    severity="error" if event.error else "information",
                    markup=False,
                )

    def on_servers_table_chosen(self, message: ServersTable.Chosen) -> None:
        if self.fleet.select(message.index):
            with self.batch_update():
                self.live.show_server(self.main)

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
                failed = workers.failed_poll(self.fleet.servers[0], event.worker.error)
                self.post_message(messages.ServerPolled(failed))
            if event.worker.group == "sweep" and self.screen_stack:
                self.main.set_sweep_running(False)
                self.sweeps.ended(self.main)

    # -- workers: run tui/workers.py's functions, which only post messages ---------------------
    @work(exclusive=True, group="poll-server", exit_on_error=False)
    async def poll_server(self) -> None:
        await workers.poll_servers(
            self.fleet, self.settings.interval_s, self.post_message, workers.cancelled(), self.meters_at_poll
        )

    @property
    def meters_at_poll(self) -> bool:
        """Polls come often enough to hand over the meters' readings themselves."""
        return self.settings.interval_s <= LIVE_REPAINT_S

    def read_meter(self) -> None:
        """Hand new sampler readings to the handler (every half second, on the UI thread)."""
        workers.read_meters(self.fleet, self.post_message)

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def run_probe(self) -> None:
        await workers.probe(self.fleet.watched, self.settings.api_key, self.post_message)

    @work(thread=True, exclusive=True, group="server-log", exit_on_error=False)
    def follow_server_log(self) -> None:
        workers.follow_server_log(self.settings, self.post_message, workers.cancelled())

    @work(thread=True, exclusive=True, group="proxy", exit_on_error=False)
    def run_proxy(self) -> None:
        workers.run_proxy(self.settings, self.post_message, workers.cancelled())

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def sweep_worker(self, request: SweepRequest) -> None:
        workers.sweep(request, self.fleet.sampler, self.settings, self.post_message, workers.cancelled())

    # -- actions: the keys and the command palette's entries -----------------------------------
    def action_sweep(self) -> None:
        if any(w.group == "sweep" and w.is_running for w in self.workers):
            self.notify("a sweep is running: press c to cancel it", severity="warning")
            return
        self.push_screen(self.sweeps.dialog(), self.start_sweep)

    def start_sweep(self, request: SweepRequest | SavedRun | None) -> None:
        if isinstance(request, SavedRun):  # a finished run, shown from its folder
            self.sweeps.show_saved(request, self.main)
        elif request is not None:
            self.sweeps.started(self.main)
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
        self.fleet.pause(not self.state.paused)
        self.live.show_sources(self.main)
        if self.live.stale:  # no poll or meter read comes while paused to show what arrived last
            self.live.paint(self.main)

    def action_toggle_panels(self) -> None:
        self.main.toggle_panels()

    def action_tab(self, tab: str) -> None:
        self.main.select_tab(tab)

    def action_help(self) -> None:
        from tui.widgets.help_screen import HelpScreen  # Markdown's parser: loaded on the first `?`

        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for title, help_text, action in PALETTE:
            yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))
