"""Energy: live mJ/token gross and net of idle, and the verdict against the last sweep."""

from __future__ import annotations

from rich.text import Text

from collectors.fmt import num
from collectors.live.verdict import LiveEnergy
from collectors.sweep.rule import Verdict
from tui.widgets.figures import line
from tui.widgets.panel import Panel


def verdict_style(reading: Verdict | None) -> str:
    """Green where drafting saves energy, red where it costs, dim otherwise (break-even, no verdict)."""
    return {Verdict.SAVES: "green", Verdict.COSTS: "red"}.get(reading, "dim") if reading else "dim"


class EnergyPanel(Panel):
    TITLE = "energy per token"

    def lines(self, view: LiveEnergy) -> list[Text]:
        window = f"last {view.window_s:.0f} s, {view.tokens} tokens" if view.window_s else "no window yet"
        return [
            line((num(view.mj_per_token, ".0f", " mJ/tok"), "bold"), ("  gross", "dim")),
            line((view.net_problem, "yellow"))
            if view.net_problem
            else line(num(view.net_mj_per_token, ".0f", " mJ/tok"), ("  net of idle", "dim")),
            line((window, "dim")),
            Text(view.verdict, style="bold red" if view.void else verdict_style(view.reading)),
        ]
