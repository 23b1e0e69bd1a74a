"""The dashboard screen: the source bar, the four live panels and the tabs, redrawn piece by piece.

Watching several servers, a summary table with a row per server comes first; the source bar,
panels and tabs below it show the server picked there (`select_server`). With one server there is
no table and the screen is the single-server one.

The App routes (it owns the state and the message handlers); this screen renders. It holds typed
references to its children and has one `show_*` method per kind of change, so a meter read redraws
the power and energy panels and never the requests table, and a poll never rebuilds the latency
histogram. Panels compare each new view with the one they show and skip an equal one.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from textual.app import ComposeResult
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from collectors.energy.attribution import Attribution
from collectors.live.verdict import LiveEnergy
from collectors.meters import MeterInfo
from collectors.requests.record import RequestRecord
from collectors.servers.latency import ServerLatency
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import events
from tui.fleet import ServerRow
from tui.widgets.drafting_panel import DraftingPanel, DraftingView
from tui.widgets.energy_panel import EnergyPanel
from tui.widgets.latency_panel import LatencyPanel, LatencyView
from tui.widgets.power_panel import PowerPanel, PowerView
from tui.widgets.requests_table import RequestsTable
from tui.widgets.server_latency import ServerLatencyLine
from tui.widgets.servers_table import ServersTable
from tui.widgets.source_bar import SourceBar, SourceView
from tui.widgets.sweep_panel import SweepPanel
from tui.widgets.throughput_panel import ThroughputPanel, ThroughputView

LATENCY_RECORDS = 20  # the latency tab pools the gaps of this many recent requests
SPARKLINE_POINTS = 120
MAX_PANEL_ROWS = 12  # a row of panels grows to its content up to this, borders included


class DashboardScreen(Screen[None]):
    """The main screen: what the App shows, one `show_*` call per kind of change."""

    def __init__(self, server_url: str, meter: MeterInfo | None, fleet_names: Sequence[str] = ()) -> None:
        super().__init__()
        self.server_url, self.meter = server_url, meter
        self._fitted_rows: tuple[int | None, int | None] | None = None  # the panels' texts' rows, as fitted
        # several servers: their summary table; one: none, and the screen is the single-server one
        self.servers_table = ServersTable(fleet_names, id="servers") if len(fleet_names) > 1 else None
        self.source_bar = SourceBar(id="source-bar")
        self.power_panel = PowerPanel(id="power")
        self.throughput_panel = ThroughputPanel(id="throughput")
        self.drafting_panel = DraftingPanel(id="drafting")
        self.energy_panel = EnergyPanel(id="energy")
        self.tabs = TabbedContent(id="tabs", initial="requests")
        self.requests_table = RequestsTable(id="requests-table")
        self.latency_panel = LatencyPanel(id="latency-panel")
        self.server_latency = ServerLatencyLine(id="server-latency")
        self.sweep_panel = SweepPanel(id="sweep-panel")
        self._sweep_total = 0  # points in the running sweep's schedule, refinement included

    def compose(self) -> ComposeResult:
        if self.servers_table is not None:
            yield self.servers_table
        yield self.source_bar
        with Grid(id="panels"):
            yield self.power_panel
            yield self.throughput_panel
            yield self.drafting_panel
            yield self.energy_panel
        with self.tabs:
            with TabPane("Requests", id="requests"):
                yield self.requests_table
            with TabPane("Latency", id="latency"):
                yield self.server_latency
                yield self.latency_panel
            with TabPane("Sweep", id="sweep"):
                yield self.sweep_panel
        yield Footer()

    def on_mount(self) -> None:
        if self.servers_table is not None:
            self.servers_table.focus()  # arrows and Enter pick a server from the start

    # -- several servers -----------------------------------------------------------------------------
    def show_servers(self, rows: Sequence[ServerRow], selected: int) -> None:
        """The summary table's rows (a dashboard of several servers only)."""
        if self.servers_table is not None:
            self.servers_table.show(rows, selected)

    def select_server(self, server_url: str, meter: MeterInfo | None) -> None:
        """The source bar and panels now show this server; the App then shows its figures."""
        self.server_url, self.meter = server_url, meter

    # -- live figures ------------------------------------------------------------------------------
    def show_sources(
        self,
        snapshot: ServerSnapshot | None,
        meter_error: str | None,
        paused: bool,
        void_warning: str | None,
        log_state: tuple[str, bool] | None = None,
    ) -> None:
        self.source_bar.view = SourceView(
            self.server_url, snapshot, self.meter, meter_error, paused, void_warning, log_state
        )

    def show_power(
        self, power_w: float | None, idle_w: float | None, history_w: Sequence[float], error: str | None
    ) -> None:
        history = tuple(history_w)[-SPARKLINE_POINTS:]
        self.power_panel.view = PowerView(self.meter, power_w, idle_w, history, error)
        self.power_panel.set_class(bool(error), "-failed")

    def show_snapshot(
        self,
        snapshot: ServerSnapshot,
        drafting: ServerSnapshot,
        history_tok_s: Sequence[float],
        void_warning: str | None,
        recent_tok_s: tuple[float | None, float] | None = None,
    ) -> None:
        """Throughput from the latest poll, its tokens/s over the last polls (`recent_tok_s`: the
        figure and its window, `LiveLedger.recent_tok_s`); drafting over the rolling window
        (`LiveState.drafting`)."""
        recent, recent_s = recent_tok_s if recent_tok_s is not None else (None, None)
        history = tuple(history_tok_s)[-SPARKLINE_POINTS:]
        self.throughput_panel.view = ThroughputView(snapshot, history, recent, recent_s)
        self.throughput_panel.set_class(not snapshot.ok, "-failed")
        self.drafting_panel.view = DraftingView(drafting, void_warning)
        self.drafting_panel.set_class(bool(void_warning), "-failed")
        if self._panel_rows() != self._fitted_rows:  # the panels' row grows or shrinks to the text
            self.call_after_refresh(self.fit_panels)

    def show_energy(self, energy: LiveEnergy) -> None:
        self.energy_panel.view = energy

    def show_slots(self, snapshot: ServerSnapshot | None, slot_tok_s: dict[int, float]) -> None:
        """The server's busy slots in the requests table."""
        slots = snapshot.busy_slot_tokens if snapshot else ()
        self.requests_table.show_slots(snapshot, slots, slot_tok_s)

    def show_records(self, records: Iterable[RequestRecord], attribution: Mapping[str, Attribution]) -> None:
        """spectop's own requests: their rows, and the latency tab's pool of the recent ones."""
        records = list(records)
        self.requests_table.show_records(records, attribution)
        recent = tuple(records[-LATENCY_RECORDS:])
        self.latency_panel.view = LatencyView(recent)
        ttfts = [r.latency.ttft_ms for r in recent if r.latency.ttft_ms is not None]
        client_p50 = statistics.median(ttfts) if ttfts else None  # p50, without numpy
        self.server_latency.view = replace(self.server_latency.view, client_ttft_p50_ms=client_p50)

    def show_server_latency(self, figures: ServerLatency | None, exported: bool) -> None:
        """The server's own tails over the rolling window, above spectop's in the latency tab."""
        self.server_latency.view = replace(self.server_latency.view, latency=figures, exported=exported)

    # -- the sweep ---------------------------------------------------------------------------------
    def show_sweep_event(self, event: events.SweepEvent) -> None:
        """A sweep event's mark on the sweep tab (its records and figures go through the App)."""
        panel = self.sweep_panel
        if isinstance(event, events.SweepStarted):
            self._sweep_total = len(event.schedule)
            panel.planned(event.schedule)
            panel.status(f"measuring idle power… files in {event.run_dir}")
        elif isinstance(event, events.PointProgressed):
            panel.progressed(event.index, event.state, self._sweep_total, event.key.label)
        elif isinstance(event, events.PointDone):
            panel.point_done(event.index, event.row)
        elif isinstance(event, events.PointsAdded):
            self._sweep_total += len(event.keys)
            panel.add_points(event.first_index, event.keys)
        elif isinstance(event, events.SweepEnded):
            panel.ended(event.summary, str(event.run_dir), event.cancelled, event.error)

    def set_sweep_running(self, running: bool) -> None:
        self.sweep_panel.set_running(running)

    def show_sweep_status(self, text: str, style: str = "") -> None:
        self.sweep_panel.status(text, style)

    # -- layout ------------------------------------------------------------------------------------
    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_panels)

    def _panel_rows(self) -> tuple[int | None, int | None]:
        """The rows the drafting and energy panels' texts need now (None before a view or a layout)."""
        return self.drafting_panel.rows_needed(), self.energy_panel.rows_needed()

    def fit_panels(self) -> None:
        """The panels' row as tall as the tallest text (the drafting panel's advice and the energy
        panel's verdict and schedule wrap) where the screen has room; a short screen keeps app.tcss's
        height for the tabs, and the advice's verdict stays on the drafting panel's border."""
        needed = self._fitted_rows = self._panel_rows()
        rows = max((r for r in needed if r is not None), default=None)
        grid = self.query_one("#panels", Grid)
        if rows is None or self.has_class("short"):
            grid.styles.height = None
            return
        narrow = self.has_class("narrow")
        per_row = min(MAX_PANEL_ROWS, max(7 if narrow else 8, rows + 2))  # app.tcss's heights, + the border
        height = 2 * per_row if narrow else per_row
        if grid.styles.height is None or grid.styles.height.value != height:
            grid.styles.height = height

    def select_tab(self, tab: str) -> None:
        self.tabs.active = tab

    def toggle_panels(self) -> None:
        self.toggle_class("-no-panels")

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # on short terminals the sweep tab takes the panels' room (app.tcss)
        self.set_class(event.pane.id == "sweep", "-sweep-tab")
