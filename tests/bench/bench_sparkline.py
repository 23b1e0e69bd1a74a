"""What a sparkline's redraw costs: Textual's Sparkline against a panel's (tui/widgets/panel.py).

Run by hand: `python tests/bench/bench_sparkline.py [updates]`. A headless app (160x45) holds one
70x6 sparkline of 300 points, the panels' history; each update shifts in a new point (a sine, so
every bar and colour moves), lets the app redraw, then changes a one-cell Static and lets it
redraw again (the floor: a frame with the sparkline unchanged). Printed: the process's CPU per
update for each widget, the app's own floor included, so read the difference; then the panel's
draw alone (`sparkline_strips` from its data, the median of `updates` draws).
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import time

from rich.color import Color
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widgets import Sparkline, Static

from tests.support.panels import Bars
from tui.widgets.sparkline import sparkline_strips


def wave(i: int) -> float:
    return 50 + 40 * math.sin(i / 7)


class One(App[None]):
    CSS = "Sparkline { height: 6; width: 70; } Bars { height: 8; width: 74; }"

    def __init__(self, kind: type[Sparkline] | type[Bars]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        yield Sparkline([], summary_function=max) if self.kind is Sparkline else Bars()
        yield Static("0", id="floor")


async def ms_per_update(kind: type[Sparkline] | type[Bars], updates: int) -> float:
    app = One(kind)
    async with app.run_test(size=(160, 45)) as pilot:
        widget, floor = app.query_one(kind), app.query_one("#floor", Static)
        data = [wave(i) for i in range(300)]
        t0 = time.process_time()
        for i in range(updates):
            data = [*data[1:], wave(300 + i)]
            if isinstance(widget, Sparkline):
                widget.data = data
            else:
                widget.view = data
            await pilot.pause()
            floor.update(str(i))
            await pilot.pause()
        return (time.process_time() - t0) * 1000 / updates


def ms_per_draw(updates: int) -> float:
    style, low, high = Style(), Color.from_rgb(0, 60, 90), Color.from_rgb(0, 150, 220)
    data, times = [wave(i) for i in range(300)], []
    styles: dict[object, Style] = {}
    for i in range(updates):
        data = [*data[1:], wave(300 + i)]
        t0 = time.perf_counter()
        sparkline_strips(data, 70, 6, max, style, low, high, styles)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    updates = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    kinds: tuple[type[Sparkline] | type[Bars], ...] = (
        Sparkline,
        Bars,
        Sparkline,
        Bars,
    )  # twice each, alternated
    for kind in kinds:
        print(f"{kind.__name__:>15}: {asyncio.run(ms_per_update(kind, updates)):.2f} ms of CPU per update")
    print(f"a panel's sparkline draw alone: {ms_per_draw(updates):.3f} ms (median)")


if __name__ == "__main__":
    main()
