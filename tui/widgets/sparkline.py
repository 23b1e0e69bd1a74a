"""Textual's Sparkline, drawn straight to strips: the same cells, without Rich's render pipeline.

Textual renders its Sparkline through Rich (a Style built per cell, then the console's render,
line splitting and cropping): 1.2-1.6 ms a draw, three draws a poll. These functions lay the same
bars and colours out as strips for the panels (tui/widgets/panel.py), with a style kept per colour
and per bar height. Neighbouring cells of one style are one segment (the blanks above the bars,
mostly): the compositor divides and the terminal writes segments, not cells.
"""

from __future__ import annotations

from typing import Any

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

BARS = "▁▂▃▄▅▆▇█"  # Textual's own (textual.renderables.sparkline)
STYLES_KEPT = 4096  # cell styles kept by colour and by bar height


def sparkline_strips(
    data: list[float],
    width: int,
    height: int,
    summary: Any,
    base: Style,
    low: RichColor,
    high: RichColor,
    styles: dict[object, Style],
) -> list[Strip]:
    """The lines of a sparkline of two or more points, top first, cell for cell as Textual's
    renderable draws them over `base` (the widget's style); `styles` keeps a style per colour."""
    width, height = max(1, width), max(1, height)
    ratios = column_ratios(data, width, summary)
    column_styles = [_style(ratio, base, low, high, styles) for ratio in ratios]  # on every line
    levels = len(BARS) * height - 1
    bars = [int(ratio * levels) for ratio in ratios]
    return [
        Strip(line_segments(bars, column_styles, base, i * len(BARS)), width) for i in reversed(range(height))
    ]


def _style(
    ratio: float | None, base: Style, low: RichColor, high: RichColor, styles: dict[object, Style]
) -> Style:
    """A cell's style as Textual's renderable builds it (blend_colors, then the widget's own style
    under it), kept per colour."""
    if ratio is None:
        return base
    if ratio in styles:  # a height drawn before (a flat stretch, a repeated figure)
        return styles[ratio]
    if low.triplet is None or high.triplet is None:
        color = high
    else:
        (r1, g1, b1), (r2, g2, b2) = low.triplet, high.triplet
        color = RichColor.from_rgb(r1 + (r2 - r1) * ratio, g1 + (g2 - g1) * ratio, b1 + (b2 - b1) * ratio)
    if len(styles) > STYLES_KEPT:  # heights are floats: a long watch must not grow this for ever
        styles.clear()
    if color not in styles:
        styles[color] = base + Style.from_color(color)
    styles[ratio] = styles[color]
    return styles[color]


def column_ratios(data: list[float], width: int, summary: Any) -> list[float]:
    """Each column's bar height as a share of the data's range, for two or more points, as
    Textual's renderable buckets and summarises them."""
    minimum, maximum = min(data), max(data)
    extent = maximum - minimum or 1
    n = len(data)  # bucket i is data[n*i/width : n*(i+1)/width], floored: Textual's Fraction steps
    buckets = [data[n * i // width : n * (i + 1) // width] for i in range(width)]
    buckets = [b for b in buckets if b]
    ratios = []
    bucket_index, bucket_step = 0.0, len(buckets) / width
    for _ in range(width):
        ratios.append((summary(buckets[int(bucket_index)]) - minimum) / extent)
        bucket_index += bucket_step
    return ratios


def line_segments(bars: list[int], styles: list[Style], blank: Style, floor: int) -> list[Segment]:
    """One line of bars whose lowest level is `floor`: a column below it is blank, above it a full
    block, in it its eighth; a segment per run of one style."""
    out: list[Segment] = []
    run: list[str] = []
    run_style: Style | None = None
    top = floor + len(BARS)
    for bar, style in zip(bars, styles):
        if bar < floor:
            char, style = " ", blank
        else:
            char = "█" if bar >= top else BARS[bar - floor]
        if style is not run_style:
            if run:
                out.append(Segment("".join(run), run_style))
            run, run_style = [], style
        run.append(char)
    if run:
        out.append(Segment("".join(run), run_style))
    return out
