"""SpectopApp: compose the panels, start the workers, route their messages into state and views."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Button, Footer, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from collectors.client import RequestSpec, stream_request
from collectors.errors import SpectopError
from collectors.fmt import num, pct
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters import Sampler
from collectors.servers import default_route
from collectors.sweep.runner import (
    IdleMeasured,
    PointDone,
    PointProgressed,
    PointsAdded,
    SweepEnded,
    SweepStarted,
    run_sweep,
)
from tui import messages, views
from tui.config import Settings
from tui.state import LiveState
from tui.widgets.drafting_panel import DraftingPanel
from tui.widgets.energy_panel import EnergyPanel
from tui.widgets.help_screen import HelpScreen
from tui.widgets.latency_panel import LatencyPanel
from tui.widgets.power_panel import PowerPanel
from tui.widgets.requests_table import RequestsTable
from tui.widgets.source_bar import SourceBar
from tui.widgets.sweep_dialog import SweepDialog, SweepRequest, arm_field
from tui.widgets.sweep_panel import SweepPanel
from tui.widgets.throughput_panel import ThroughputPanel


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
    ) -> None:
        super().__init__()
        self.settings, self.collector, self.sampler = settings, collector, sampler
        self.on_sweep = on_sweep  # told when a sweep starts and ends (the demo pauses its traffic)
        self.title = settings.title
        self.state = LiveState(settings.energy_window_s)
        self.meter_error: str | None = None
        self._meter_t_s: float | None = None
        self._sweep_total = 0

    def compose(self) -> ComposeResult:
        yield SourceBar(id="source-bar")
        with Grid(id="panels"):
            yield PowerPanel(id="power")
            yield ThroughputPanel(id="throughput")
            yield DraftingPanel(id="drafting")
            yield EnergyPanel(id="energy")
        with TabbedContent(id="tabs", initial="requests"):
            with TabPane("Requests", id="requests"):
                yield RequestsTable(id="requests-table")
            with TabPane("Latency", id="latency"):
                yield LatencyPanel(id="latency-panel")
            with TabPane("Sweep", id="sweep"):
                yield SweepPanel(id="sweep-panel")
        yield Footer()

    def on_mount(self) -> None:
        self.on_resize()
        self.refresh_views()
        if self.settings.poll:
            self.poll_server()
            if self.sampler is not None:
                self.set_interval(0.5, self.read_meter)

    def on_resize(self, event: object = None) -> None:
        self.main.set_class(self.size.width < 120, "narrow")
        self.main.set_class(self.size.height < 40, "short")

    # -- workers: they only post messages ------------------------------------------------------
    @work(exclusive=True, group="poll-server", exit_on_error=False)
    async def poll_server(self) -> None:
        while True:
            started = time.monotonic()
            if not self.state.paused:
                self.post_message(messages.ServerPolled(await self.collector.poll()))
            await asyncio.sleep(max(0.05, self.settings.interval_s - (time.monotonic() - started)))

    def read_meter(self) -> None:
        """Hand new sampler readings to the handler; the sampler's own thread does the reading."""
        if self.sampler is None or self.state.paused:
            return
        readings = self.sampler.readings(since_t_s=self._meter_t_s)
        readings = [r for r in readings if self._meter_t_s is None or r.t_s > self._meter_t_s]
        if readings:
            self._meter_t_s = readings[-1].t_s
        self.post_message(
            messages.MeterRead(readings, self.sampler.last_error if self.sampler.failed_ticks else None)
        )

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def run_probe(self) -> None:
        snap = self.state.latest
        dialect = snap.backend if snap else "llama.cpp"
        spec = RequestSpec(route=default_route(dialect), dialect=dialect)
        try:
            async with make_client(self.settings.api_key, STREAM_TIMEOUT) as client:
                record = await stream_request(
                    client,
                    self.settings.server_url,
                    spec,
                    busy_probe=getattr(self.collector, "busy_slots", None),
                    tag="probe",
                )
            self.post_message(messages.ProbeFinished(record))
        except SpectopError as exc:
            self.post_message(messages.ProbeFinished(None, str(exc)))

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def run_sweep(self, request: SweepRequest) -> None:
        worker = get_current_worker()
        for event in run_sweep(
            request.plan,
            request.arms,
            self.sampler,
            self.settings.results_root,
            should_stop=lambda: worker.is_cancelled,
            api_key=self.settings.api_key,
        ):
            self.post_message(messages.SweepProgressed(event))

    # -- handlers: own the state, push views ---------------------------------------------------
    def on_server_polled(self, message: messages.ServerPolled) -> None:
        self.state.add_snapshot(message.snapshot)
        self.refresh_views()

    def on_meter_read(self, message: messages.MeterRead) -> None:
        for r in message.readings:
            power = r.power_w if r.power_w is not None else self._derived_power(r)
            if power is not None:
                self.state.add_power(r.t_s, power, r.energy_j)
        self.meter_error = message.error
        self.refresh_views()

    def _derived_power(self, reading) -> float | None:
        last = self.state.power[-1] if self.state.power else None
        if last is None or reading.t_s <= last.t_s:
            return None
        return (reading.energy_j - last.energy_j) / (reading.t_s - last.t_s)

    def on_probe_finished(self, message: messages.ProbeFinished) -> None:
        if message.record is None:
            self.notify(message.error or "probe failed", title="probe", severity="error")
            return
        self.add_records([message.record])
        r = message.record
        self.notify(
            f"{r.committed_tokens} tokens, {num(r.tok_s)} tok/s, acceptance {pct(r.acceptance)}",
            title="probe",
        )

    def on_sweep_progressed(self, message: messages.SweepProgressed) -> None:
        if not self.screen_stack:
            return
        panel, event = self.main.query_one(SweepPanel), message.event
        if isinstance(event, SweepStarted):
            self._sweep_total = len(event.schedule)
            panel.planned(event.schedule)
            panel.status(f"measuring idle power… files in {event.run_dir}")
        elif isinstance(event, IdleMeasured):
            self.state.sweep_idle_w = event.power_w
        elif isinstance(event, PointProgressed):
            panel.progressed(event.index, event.state, self._sweep_total, event.key.label)
        elif isinstance(event, PointDone):
            panel.point_done(event.index, event.row)
            self.add_records(event.records)
        elif isinstance(event, PointsAdded):
            self._sweep_total += len(event.keys)
            panel.add_points(event.first_index, event.keys)
        elif isinstance(event, SweepEnded):
            self.state.sweep_summary = event.summary if event.summary["rows"] else self.state.sweep_summary
            panel.ended(event.summary, str(event.run_dir), event.cancelled, event.error)
            self.state.sweep_ended(time.monotonic())
            if self.on_sweep:
                self.on_sweep(False)
            self.notify(
                event.summary["recommendation"],
                title="sweep finished" if not event.error else "sweep stopped",
                severity="error" if event.error else "information",
            )
        self.refresh_views()

    def add_records(self, records: Iterable) -> None:
        for record in records:
            self.state.add_record(record)
        self.refresh_views()

    @on(Worker.StateChanged)
    def report_worker_error(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.notify(str(event.worker.error), title=event.worker.group, severity="error")
            if event.worker.group == "sweep":
                self.main.query_one(SweepPanel).set_running(False)
                self.state.sweep_ended(time.monotonic())
                if self.on_sweep:
                    self.on_sweep(False)

    def refresh_views(self) -> None:
        if not self.screen_stack:
            return  # torn down: a late message has nowhere to go
        try:
            with self.batch_update():
                views.push(self)
        except NoMatches:
            pass  # a message that arrives while the app is being torn down has nowhere to go

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

    def start_sweep(self, request: SweepRequest | None) -> None:
        if request is None:
            return
        self.action_tab("sweep")
        self.main.query_one(SweepPanel).set_running(True)
        self.state.sweep_started()
        if self.on_sweep:
            self.on_sweep(True)
        self.run_sweep(request)

    @on(Button.Pressed, "#sweep-run")
    def sweep_button(self) -> None:
        self.action_sweep()

    @on(Button.Pressed, "#sweep-cancel")
    def action_cancel_sweep(self) -> None:
        self.workers.cancel_group(self, "sweep")
        self.main.query_one(SweepPanel).status("cancelling: the point in flight is dropped…", "yellow")

    def action_probe(self) -> None:
        self.notify("probing the server…", title="probe", timeout=2)
        self.run_probe()

    def action_pause(self) -> None:
        self.state.paused = not self.state.paused
        self.refresh_views()

    def action_toggle_panels(self) -> None:
        self.main.toggle_class("-no-panels")

    def action_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab

    @on(TabbedContent.TabActivated)
    def note_tab(self, event: TabbedContent.TabActivated) -> None:
        # on short terminals the sweep tab takes the panels' room (app.tcss)
        self.main.set_class(event.pane.id == "sweep", "-sweep-tab")

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
    def main(self) -> Screen:
        """The dashboard screen, also while a dialog or the help is on top of it."""
        return self.screen_stack[0]
