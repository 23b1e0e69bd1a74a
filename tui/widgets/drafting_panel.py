"""Drafting: acceptance, committed advance G, verified width, rates, and per-position survival."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from collectors.fmt import num, pct
from collectors.servers.snapshot import ServerSnapshot
from tui.widgets.figures import bar, line
from tui.widgets.panel import Panel


@dataclass(frozen=True, slots=True)
class DraftingView:
    snapshot: ServerSnapshot
    void_warning: str | None = None


class DraftingPanel(Panel):
    TITLE = "drafting"

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
        return out
