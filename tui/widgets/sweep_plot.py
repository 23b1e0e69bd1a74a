"""mJ/token against batch for both arms, with the crossover marked (textual-plotext)."""

from __future__ import annotations

import math
from typing import Any

from textual_plotext import PlotextPlot


class SweepPlot(PlotextPlot):
    """Replotted from a sweep summary; the x axis is log2 of the batch so 1..16 spread evenly."""

    def on_mount(self) -> None:
        super().on_mount()
        self.show({"rows": [], "crossover": None})

    def show(self, summary: dict[str, Any]) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title("mJ/token by concurrent requests")
        rows = [t for t in summary["rows"] if t["plain"]["mj_per_token"] or t["draft"]["mj_per_token"]]
        if rows:
            xs = [math.log2(t["batch"]) for t in rows]
            for arm, colour in (("plain", "blue"), ("draft", "red")):
                # the curves join trustworthy batches only; a batch the summary left out is a lone mark
                points = [
                    (x, t[arm]["mj_per_token"])
                    for x, t in zip(xs, rows)
                    if t[arm]["mj_per_token"] and t.get("trusted", True)
                ]
                if points:
                    plt.plot(
                        [p[0] for p in points], [p[1] for p in points], label=arm, color=colour, marker="hd"
                    )
                left_out = [
                    (x, t[arm]["mj_per_token"])
                    for x, t in zip(xs, rows)
                    if t[arm]["mj_per_token"] and not t.get("trusted", True)
                ]
                if left_out:
                    plt.scatter([p[0] for p in left_out], [p[1] for p in left_out], color=colour, marker="x")
            plt.xticks(xs, [str(t["batch"]) for t in rows])
            cross = summary.get("crossover")
            if cross:
                plt.vertical_line(math.log2(cross["batch"]), color="green")
                lowest = min(
                    v for t in rows for v in (t["plain"]["mj_per_token"], t["draft"]["mj_per_token"]) if v
                )
                plt.text(f"crossover ≈ {cross['batch']:g}", math.log2(cross["batch"]), lowest, color="green")
        self.refresh()
