"""Energy: live mJ/token gross and net of idle, and the verdict against the last sweep."""

from __future__ import annotations

from rich.text import Text

from collectors.fmt import num, pct
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
            # after a tune the schedule's two lines take the window's: the panel has six rows
            *([] if view.schedule else [line((window, "dim"))]),
            Text(view.verdict, style="bold red" if view.void else verdict_style(view.reading)),
            *schedule_lines(view),
        ]


def schedule_lines(view: LiveEnergy) -> list[Text]:
    """After a tune: the K the schedule gives now, whether the server said it runs it, and the saving."""
    s = view.schedule
    if s is None:
        return []
    if s.k_running is not None and s.k_scheduled is not None and s.k_running != s.k_scheduled:
        now = line((f"K {s.k_running} runs, K {s.k_scheduled} tuned", "bold red"))
    elif s.k_scheduled is None:
        now = line(("tuned: no batch yet", "dim"))
    else:
        now = line(
            f"K {s.k_scheduled} tuned",
            (", read back" if s.k_running is not None else ", not read back", "dim"),
        )
    saved = line(
        (
            f"saved {num(s.saved_j, ',.0f', ' J')}, {pct(s.saved_fraction, 1)}",
            "green" if s.saved_j > 0 else "",
        ),
        (" vs always-draft", "dim"),
    )
    return [now, saved]
