"""Drafting: acceptance, committed advance G, verified width, rates, per-position survival and, after a
draft-length sweep, Eq. 5's width advice live: the sweep's energy per round with the server's S_j now
(collectors/sweep/marginal.py). The advice is the step that ends at the widest length the server
drafts, so it answers "is my current width worth it?" and not a width the server never tried.

Survival is one line with every position the server drafts, so 1 + Σ S_j is the G above it (both
over the same rolling window, collectors/servers/rolling.py); cut to the first three, the figures
shown did not add up. The advice's verdict is also the panel's bottom border, which a terminal too
short for the sentence still shows (the screen grows the panels' row to the sentence where it can).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text

from collectors.fmt import num, pct
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.marginal import WidthStep, live_width_advice
from tui.widgets.figures import line
from tui.widgets.panel import Panel

SURVIVAL_BLOCKS = " ▁▂▃▄▅▆▇█"  # one cell per position, eighths of the height


@dataclass(frozen=True, slots=True)
class DraftingView:
    snapshot: ServerSnapshot
    void_warning: str | None = None


class DraftingPanel(Panel):
    TITLE = "drafting"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.round_energy_mj: dict[int, float] = {}  # draft length: the last sweep's mJ per round

    def set_round_energy(self, round_energy_mj: Mapping[str, float] | None) -> None:
        """A draft-length sweep's energy per round by length (its summary's `round_energy_mj`)."""
        self.round_energy_mj = {int(k): float(v) for k, v in (round_energy_mj or {}).items()}
        if self.view is not None:
            self.watch_view(self.view)  # the advice changes with the sweep, not only with a poll

    def lines(self, view: DraftingView) -> list[Text]:
        s = view.snapshot
        if view.void_warning:
            return [Text(view.void_warning, style="bold red")]
        if s.drafting is False:
            return [Text("this server does not draft", style="dim")]

        def rate(count: int | None) -> float | None:
            return None if count is None or not s.window_s else count / s.window_s

        out = [
            line(
                ("acceptance ", "dim"),
                (pct(s.acceptance, 1), "bold"),
                ("  G ", "dim"),
                (num(s.mean_advance, ".2f"), "bold"),
            ),
            line(
                ("width ", "dim"),
                num(s.verified_width, ".2f"),
                ("  over ", "dim"),
                num(s.window_s, ".0f", " s"),
                ("  ≈", "yellow") if s.window_approximate else "",
            ),
            line(
                ("drafted/s ", "dim"),
                num(rate(s.window_drafted), ".0f"),
                ("  acc/s ", "dim"),
                num(rate(s.window_accepted), ".0f"),
            ),
        ]
        if s.survival:
            out.append(survival_line(s.survival))
        step = self.advice(s)
        if step is not None:
            out.append(line(("advice ", "dim"), (step.sentence, "bold" if step.pays else "yellow")))
        return out

    def advice(self, snapshot: ServerSnapshot) -> WidthStep | None:
        """Eq. 5 for the widest step the server's drafts reach; None before a draft-length sweep."""
        if not self.round_energy_mj or snapshot.drafting is False:
            return None
        steps = live_width_advice(self.round_energy_mj, snapshot.survival)
        return steps[-1] if steps else None

    def watch_view(self, view: DraftingView | None) -> None:
        super().watch_view(view)
        step = None if view is None or view.void_warning else self.advice(view.snapshot)
        subtitle = "" if step is None else f"advice: keep {step.keep}"
        if subtitle != (self.border_subtitle or ""):  # setting it repaints the whole box, even unchanged
            self.border_subtitle = subtitle


def survival_line(survival: Sequence[float]) -> Text:
    """`S1–4 ▆▅▄▂ 76 56 41 22 %`: every drafted position, a block and a percentage each."""
    label = "S1" if len(survival) == 1 else f"S1–{len(survival)}"
    blocks = "".join(
        SURVIVAL_BLOCKS[round(min(1.0, max(0.0, v)) * (len(SURVIVAL_BLOCKS) - 1))] for v in survival
    )
    return line(
        (f"{label} ", "dim"),
        (blocks, "green"),
        " " + " ".join(f"{100 * v:.0f}" for v in survival),
        (" %", "dim"),
    )
