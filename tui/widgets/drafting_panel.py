"""Drafting: acceptance, committed advance G, verified width, rates, per-position survival and, after a
draft-length sweep, Eq. 5's width advice live: the sweep's energy per round with the server's S_j now
(collectors/sweep/marginal.py). The advice is the step that ends at the widest length the server
drafts, so it answers "is my current width worth it?" and not a width the server never tried."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text

from collectors.fmt import num, pct
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.marginal import live_width_advice
from tui.widgets.figures import bar, line
from tui.widgets.panel import Panel


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
                (pct(s.acceptance), "bold"),
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
        for j, survival in enumerate(s.survival[:3], start=1):
            out.append(line((f"S{j} ", "dim"), (bar(survival, 12), "green"), f" {100 * survival:3.0f}%"))
        steps = live_width_advice(self.round_energy_mj, s.survival) if self.round_energy_mj else []
        if steps:
            step = steps[-1]
            out.append(line(("advice ", "dim"), (step.sentence, "bold" if step.pays else "yellow")))
        return out
