"""A panel's rows as strips: its text, wrapped at the width, and its sparkline's lines.

Drawn here, as Textual draws a Static's text and a Sparkline's bars cell for cell, so that a panel
is one widget whose rows are compared with the shown ones: a poll repaints only the rows whose
cells changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.color import Color as RichColor
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from tui.widgets.figures import line_signature


def text_rows(
    lines: Sequence[RenderableType],
    width: int,
    style: Style,
    console: Console,
    options: ConsoleOptions,
    drawn: dict[object, list[Strip]] | None = None,
) -> tuple[list[Strip], dict[object, list[Strip]]]:
    """Each line rendered at `width` (wrapping onto more rows where it must) with `style` under
    each segment's own, as Textual's post_render applies a widget's style to a Static's text; and
    the rows by line, for the next call's `drawn`: a line that reads the same there (characters
    and styles) is not rendered again, so a poll renders only the lines whose figures moved."""
    options = options.update(highlight=False, width=width, height=None)
    rows: list[Strip] = []
    now: dict[object, list[Strip]] = {}
    for line in lines:
        key = line_signature(line)
        if key is not None and drawn is not None and key in drawn:
            line_rows = drawn[key]
        elif (fits := _one_row(line, width)) is not None:  # the common case, without Rich's wrapping
            # Text.render leaves out the base style of a Text with no spans (wrapping adds it as one)
            drawn_line = (
                fits.render(console) if fits.spans else [Segment(fits.plain, console.get_style(fits.style))]
            )
            line_rows = [Strip([Segment(text, style + own, None) for text, own, _ in drawn_line])]
        else:
            segments = (Segment(text, style + own, None) for text, own, _ in console.render(line, options))
            line_rows = [
                Strip(row)
                for row in Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False)
            ]
        if key is not None:
            now[key] = line_rows
        rows.extend(line_rows)
    return rows, now


def _one_row(line: RenderableType, width: int) -> Text | None:
    """The line, if it is a Text that Rich would draw as it is on one row: it fits, breaks no
    line, expands no tab, and pads nothing (no justification of its own)."""
    if not isinstance(line, Text) or line.justify not in (None, "default"):
        return None
    plain = line.plain
    fits = bool(plain) and "\n" not in plain and "\t" not in plain and line.cell_len <= width
    return line if fits else None


def few_point_rows(
    points: int, width: int, height: int, style: Style, low: RichColor, high: RichColor
) -> list[Strip]:
    """A sparkline of no point (a floor of ▁ in the low colour under blank rows) or of one (full
    blocks in the high colour), as Textual's renderable draws them."""
    if points == 0:
        return [Strip([]) for _ in range(height - 1)] + [
            Strip([Segment("▁" * width, style + Style.from_color(low))])
        ]
    return [Strip([Segment("█" * width, style + Style.from_color(high))]) for _ in range(height)]
