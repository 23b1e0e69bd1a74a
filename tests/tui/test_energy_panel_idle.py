"""The energy panel never shows a negative energy: a window below the idle baseline says so instead."""

from __future__ import annotations

from textual.app import App, ComposeResult

from collectors.live.accounting import BELOW_IDLE
from collectors.live.verdict import LiveEnergy
from tui.widgets.energy_panel import EnergyPanel


def screen_text(app: App[None]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield EnergyPanel()


async def test_a_window_below_the_idle_baseline_reads_as_such_not_as_a_negative_figure():
    app = PanelApp()
    async with app.run_test(size=(60, 10)) as pilot:
        panel = app.query_one(EnergyPanel)
        panel.view = LiveEnergy(22.0, 50.0, None, 440, 1.0, "no sweep yet", net_problem=BELOW_IDLE)
        await pilot.pause()
        shown = screen_text(app)
        assert "50 mJ/tok  gross" in shown and "below the idle baseline: re-measure idle" in shown
        assert "-" not in shown.replace("re-measure", "").replace("─", "")  # no minus sign
        panel.view = LiveEnergy(22.0, 50.0, 10.0, 440, 1.0, "no sweep yet")
        await pilot.pause()
        assert "10 mJ/tok  net of idle" in screen_text(app)
