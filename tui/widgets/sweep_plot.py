"""mJ/token against batch for both arms, with the crossover marked; for a multi-arm sweep, mJ/token by
arm per prompt class as grouped bars (textual-plotext).

Pitfall handled: a multi-arm sweep over several batches has one bar group per class at each batch;
the plot shows the smallest batch (seed 001's one request), and its title says which.
"""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

from collectors.sweep.records import ArmFigures, ArmsSummary, BatchPair, Summary
from collectors.sweep.sentences import crossover_at
from collectors.sweep.settings import draft_length


class SweepPlot(PlotextPlot):
    """Replotted from a sweep summary; the x axis is log2 of the batch so 1..16 spread evenly."""

    def on_mount(self) -> None:
        super().on_mount()
        self.show(None)

    def show(self, record: Summary | None) -> None:
        if isinstance(record, ArmsSummary):
            self._show_arms(record)
            return
        plt = self.plt
        plt.clear_figure()
        plt.title("mJ/token by concurrent requests")
        rows = [t for t in record.rows if t.plain.mj_per_token or t.draft.mj_per_token] if record else []
        if record and rows:
            xs = [math.log2(t.batch) for t in rows]
            for arm, colour in (("plain", "blue"), ("draft", "red")):
                # the curves join trustworthy batches only; a batch the summary left out is a lone mark
                figures = [(x, t.trusted, _arm(t, arm).mj_per_token) for x, t in zip(xs, rows)]
                points = [(x, mj) for x, trusted, mj in figures if mj and trusted]
                if points:
                    plt.plot(
                        [p[0] for p in points], [p[1] for p in points], label=arm, color=colour, marker="hd"
                    )
                left_out = [(x, mj) for x, trusted, mj in figures if mj and not trusted]
                if left_out:
                    plt.scatter([p[0] for p in left_out], [p[1] for p in left_out], color=colour, marker="x")
            plt.xticks(xs, [str(t.batch) for t in rows])
            cross = record.crossover
            if cross:
                # at the ratio's 1.0 crossing, or at the band's top when that lies below the batches
                at = cross.batch_at_1 if cross.batch_at_1 is not None else cross.band_high
                plt.vertical_line(math.log2(at), color="green")
                lowest = min(v for t in rows for v in (t.plain.mj_per_token, t.draft.mj_per_token) if v)
                plt.text(f"crossover {crossover_at(cross)}", math.log2(at), lowest, color="green")
        self.refresh()

    def _show_arms(self, summary: ArmsSummary) -> None:
        """Bars of mJ/token, an arm per group and a colour per class; a missing figure is no bar (0)."""
        plt = self.plt
        plt.clear_figure()
        batches = sorted({t.batch for t in summary.rows})
        if batches:
            batch = batches[0]
            cells = {
                (t.prompt_class, t.arm): t.figures.mj_per_token for t in summary.rows if t.batch == batch
            }
            plt.title(
                f"mJ/token by arm per class (N: draft-N), {batch} request" + ("" if batch == 1 else "s")
            )
            arms, classes = list(summary.arms), list(summary.classes)
            series = [[cells.get((c, a)) or 0.0 for a in arms] for c in classes]
            positions = [float(i) for i in range(1, len(arms) + 1)]
            # plotext takes `labels` (a list); textual-plotext's stub says `label`
            plt.multiple_bar(positions, series, labels=classes, reset_ticks=False)  # type: ignore[call-arg]
            # short tick labels (a draft-N arm is N): plotext places labels that crowd each other
            # in an order that follows the string hash seed, so long ones moved between runs
            plt.xticks(positions, [_short(a) for a in arms])
        else:
            plt.title("mJ/token by arm per class")
        self.refresh()


def _arm(t: BatchPair, arm: str) -> ArmFigures:
    return t.plain if arm == "plain" else t.draft


def _short(arm: str) -> str:
    n = draft_length(arm)
    return str(n) if n is not None else arm
