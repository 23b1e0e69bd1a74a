"""The App's part for several servers in one dashboard: the summary table, and picking a server.

The handlers of tui/app.py feed each server's LiveState; this shows them all in the summary table
and switches the source bar, panels and tabs to the server picked there (Enter or a click on its
row). With one server none of it shows, and the dashboard is the single-server one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collectors.live.verdict import LiveEnergy
from collectors.meters import MeterInfo
from tui.fleet import fleet_energy, summary_rows
from tui.widgets.servers_table import ServersTable
from tui.workers import WorkingApp

if TYPE_CHECKING:
    from tui.screens.dashboard import DashboardScreen


class FleetApp(WorkingApp):
    """SpectopApp's servers: which one is shown, and the summary table of them all."""

    if TYPE_CHECKING:  # defined by SpectopApp

        @property
        def main(self) -> DashboardScreen: ...

        def show_sources(self) -> str | None: ...

        def paint_live(self) -> None: ...

    @property
    def fleet(self) -> bool:
        """Several servers: the summary table is shown."""
        return len(self.servers) > 1

    @property
    def meter_error(self) -> str | None:
        return self.watched.meter_error

    def meter_info(self) -> MeterInfo | None:
        return self.sampler.meter.info if self.sampler else None

    def energy(self) -> LiveEnergy:
        """The shown server's live energy; with several servers on one meter, its share by tokens."""
        if not self.fleet:
            return self.state.energy()
        return fleet_energy(self.servers)[self.selected].energy

    def show_fleet(self) -> None:
        """The summary table, when several servers are watched."""
        if self.fleet and self.screen_stack:
            self.main.show_servers(summary_rows(self.servers), self.selected)

    def select_server(self, index: int) -> None:
        """Show server number `index` in the source bar, panels and tabs."""
        if not 0 <= index < len(self.servers) or index == self.selected:
            return
        self.selected = index
        self.main.select_server(self.watched.url, self.meter_info())
        state = self.state
        with self.batch_update():
            warning = self.show_sources()
            if state.latest is not None:
                self.main.show_snapshot(state.latest, state.drafting() or state.latest, state.tok_s, warning)
            self.paint_live()  # the table too
            self.main.show_slots(state.latest, state.slot_tok_s)
            self.main.show_records(state.records.values(), state.attribution())

    def pause_all(self, paused: bool) -> None:
        """Polling and meter reads stop, and start again, for all servers together."""
        for server in self.servers:
            server.state.paused = paused

    def on_servers_table_chosen(self, message: ServersTable.Chosen) -> None:
        self.select_server(message.index)
