"""Power: watts now, their history, the idle baseline, and what the meter measures."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from collectors.fmt import num
from collectors.meters import MeterInfo
from tui.widgets.figures import line
from tui.widgets.panel import Panel


@dataclass(frozen=True, slots=True)
class PowerView:
    info: MeterInfo | None
    power_w: float | None
    idle_w: float | None
    history_w: tuple[float, ...]
    error: str | None = None


class PowerPanel(Panel):
    TITLE = "power"
    SPARKLINE = True

    def lines(self, view: PowerView) -> list[Text]:
        if view.info is None:
            return [Text("no meter (--meter none)", style="dim")]
        now = line((num(view.power_w, ".1f", " W"), "bold"), ("  now", "dim"))
        idle = line(
            ("idle ", "dim"),
            num(view.idle_w, ".1f", " W") if view.idle_w is not None else ("not measured yet", "dim"),
        )
        method = "ESTIMATE" if view.info.method == "estimate" else view.info.method
        src = line((f"{view.info.name} {method}", "bold yellow" if view.info.method == "estimate" else "dim"))
        out = [now, idle, src]
        if view.error:
            out.append(Text(view.error, style="red"))
        return out

    def series(self, view: PowerView) -> list[float]:
        return list(view.history_w)
