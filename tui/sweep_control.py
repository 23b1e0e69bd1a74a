"""The dashboard's side of a sweep: the dialog, a run starting and ending, and what its summary leaves.

The App's keys, buttons and sweep handler call it; the sweep worker (tui/workers.py) runs the
engine. It holds no App: it marks the shown server's state (the live verdict waits while a sweep
runs, and reads the last paired sweep's plain curve after), tells the demo's traffic to stop and
start again, and shows on the screen it is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from collectors.sweep.records import ArmsSummary, Summary
from collectors.sweep.request import SavedRun
from tui.config import Settings
from tui.fleet import Fleet
from tui.screens.dashboard import DashboardScreen
from tui.widgets.sweep_dialog import SweepDialog, arm_field


class SweepController:
    """What a sweep changes outside its own tab, and the dialog that sets one up."""

    def __init__(self, settings: Settings, fleet: Fleet, on_sweep: Callable[[bool], None] | None) -> None:
        self.settings, self.fleet = settings, fleet
        self.on_sweep = on_sweep  # told when a sweep starts and ends (the demo pauses its traffic)

    def dialog(self) -> SweepDialog:
        """The dialog, its fields filled from the settings; it returns a SweepRequest, a SavedRun or None."""
        s = self.settings
        return SweepDialog(
            s.quick_plan,
            s.sweep_plan,
            arm_field(s.plain_url, s.plain_cmd),
            arm_field(s.draft_url, s.draft_cmd),
        )

    def started(self, screen: DashboardScreen) -> None:
        """A run from the dialog starts: the sweep tab and its buttons, the live verdict held."""
        screen.select_tab("sweep")
        screen.set_sweep_running(True)
        self.fleet.state.sweep_started()
        screen.show_energy(self.fleet.energy())
        if self.on_sweep:
            self.on_sweep(True)

    def ended(self, screen: DashboardScreen) -> None:
        """The run ended (done, cancelled or failed): the live window starts again now."""
        self.fleet.state.sweep_ended(time.monotonic())
        screen.show_energy(self.fleet.energy())
        if self.on_sweep:
            self.on_sweep(False)

    def finished(self, summary: Summary, screen: DashboardScreen) -> None:
        """The run's last event: its summary kept, then as `ended`."""
        self.keep_summary(summary, screen)
        self.ended(screen)

    def show_saved(self, run: SavedRun, screen: DashboardScreen) -> None:
        """A finished run, shown from its folder on the sweep tab."""
        screen.select_tab("sweep")
        self.keep_summary(run.summary, screen)
        screen.sweep_panel.show_saved(run.summary, str(run.run_dir))

    def keep_summary(self, summary: Summary, screen: DashboardScreen) -> None:
        """A paired sweep's rows become the live verdict's reference; a multi-arm one gives width advice."""
        if isinstance(summary, ArmsSummary):
            screen.drafting_panel.set_round_energy(summary.round_energy_mj)
        elif summary.rows:
            self.fleet.state.sweep_summary = summary
