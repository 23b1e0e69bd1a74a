"""The dashboard's actions: the keys and the command palette's entries, and starting a sweep.

Each action asks a worker (tui/workers.py) or the screen to do it; what comes back arrives as a
message the handlers in tui/app.py route. Kept apart from the handlers so tui/app.py stays small.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import on
from textual.app import SystemCommand
from textual.screen import Screen
from textual.widgets import Button

from collectors.sweep.request import SavedRun, SweepRequest
from tui.fleet_app import FleetApp
from tui.sweep_text import is_arms
from tui.widgets.help_screen import HelpScreen
from tui.widgets.sweep_dialog import SweepDialog, arm_field


class ActionsApp(FleetApp):
    """SpectopApp's actions."""

    if TYPE_CHECKING:  # set by SpectopApp
        on_sweep: Callable[[bool], None] | None
        _live_stale: bool

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
        self.main.show_energy(self.energy())
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
        self.pause_all(not self.state.paused)
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
