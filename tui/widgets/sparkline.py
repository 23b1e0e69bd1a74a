"""Textual's Sparkline, drawn straight to strips: the same cells, without Rich's render pipeline.

Textual renders its Sparkline through Rich (a Style built per cell, then the console's render,
line splitting and cropping): 1.2-1.6 ms a draw, three draws a poll. This one lays the same bars
and colours out as strips, with a style per colour kept, and draws again only when its data, size
or colours change.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import Sparkline

BARS = "▁▂▃▄▅▆▇█"  # Textual's own (textual.renderables.sparkline)


class QuickSparkline(Sparkline):
    """A Sparkline whose lines are built here, cell for cell as Textual's renderable draws them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._drawn_key: tuple[object, ...] | None = None
        self._drawn_data: object = None  # held, so `is` in the key cannot meet a reused id
        self._strips: list[Strip] = []
        self._styles: dict[RichColor, Style] = {}  # a cell's style by its colour, for these colours

    def render_line(self, y: int) -> Strip:
        if len(self.data or ()) < 2:  # the empty and one-point lines: Textual's own, drawn rarely
            return super().render_line(y)
        strips = self._draw()
        return (
            strips[y] if 0 <= y < len(strips) else Strip.blank(self.size.width, self.visual_style.rich_style)
        )

    def _colors(self) -> tuple[Style, RichColor, RichColor]:
        _, base = self.background_colors
        low = base + (
            self.get_component_styles("sparkline--min-color").color
            if self.min_color is None
            else self.min_color
        )
        high = base + (
            self.get_component_styles("sparkline--max-color").color
            if self.max_color is None
            else self.max_color
        )
        return self.visual_style.rich_style, low.rich_color, high.rich_color

    def _draw(self) -> list[Strip]:
        base, low, high = self._colors()
        key = (self.size, base, low, high, self.summary_function)
        if self.data is self._drawn_data and key == self._drawn_key:
            return self._strips
        if key[1:] != (self._drawn_key or (None,))[1:]:
            self._styles.clear()
        self._drawn_key, self._drawn_data = key, self.data
        width = self.size.width
        rows = bar_rows(list(self.data or []), width, self.size.height, self.summary_function)
        self._strips = [
            Strip([Segment(bar, self._style(ratio, low, high)) for bar, ratio in row], width) for row in rows
        ]
        return self._strips

    def _style(self, ratio: float | None, low: RichColor, high: RichColor) -> Style:
        """The cell's style as Textual's renderable builds it (blend_colors, then the widget's own
        style under it), kept per colour."""
        base = self.visual_style.rich_style
        if ratio is None:
            return base
        if low.triplet is None or high.triplet is None:
            color = high
        else:
            (r1, g1, b1), (r2, g2, b2) = low.triplet, high.triplet
            color = RichColor.from_rgb(r1 + (r2 - r1) * ratio, g1 + (g2 - g1) * ratio, b1 + (b2 - b1) * ratio)
        if color not in self._styles:
            self._styles[color] = base + Style.from_color(color)
        return self._styles[color]


def bar_rows(
    data: list[float], width: int, height: int, summary: Any
) -> list[list[tuple[str, float | None]]]:
    """Each line's cells, top first: (bar, height ratio for its colour, None for a blank), for two
    or more points, as Textual's renderable lays them out."""
    height = max(1, height)
    per_line = len(BARS)
    segments = per_line * height - 1
    minimum, maximum = min(data), max(data)
    extent = maximum - minimum or 1
    step = Fraction(len(data), width)
    buckets = [data[int(step * i) : int(step * (i + 1))] for i in range(width)]
    buckets = [b for b in buckets if b]
    ratios = []
    bucket_index, bucket_step = 0.0, len(buckets) / width
    for _ in range(width):
        ratios.append((summary(buckets[int(bucket_index)]) - minimum) / extent)
        bucket_index += bucket_step
    rows = []
    for i in reversed(range(height)):
        low_part, high_part = i * per_line, (i + 1) * per_line
        row: list[tuple[str, float | None]] = []
        for ratio in ratios:
            bar_index = int(ratio * segments)
            if bar_index < low_part:
                row.append((" ", None))
            elif bar_index >= high_part:
                row.append(("█", ratio))
            else:
                row.append((BARS[bar_index % per_line], ratio))
        rows.append(row)
    return rows
