"""Energy: live mJ/token gross and net of idle, and the verdict against the last sweep."""

from __future__ import annotations

from rich.text import Text

from collectors.fmt import num
from collectors.live.verdict import LiveEnergy
from tui.widgets.figures import line
from tui.widgets.panel import Panel


class EnergyPanel(Panel):
    TITLE = "energy per token"

    def lines(self, view: LiveEnergy) -> list[Text]:
        window = f"last {view.window_s:.0f} s, {view.tokens} tokens" if view.window_s else "no window yet"
        verdict_style = "green" if "saves" in view.verdict else ("red" if "costs" in view.verdict else "dim")
        return [
            line((num(view.mj_per_token, ".0f", " mJ/tok"), "bold"), ("  gross", "dim")),
            line(num(view.net_mj_per_token, ".0f", " mJ/tok"), ("  net of idle", "dim")),
            line((window, "dim")),
            Text(view.verdict, style=verdict_style),
        ]
