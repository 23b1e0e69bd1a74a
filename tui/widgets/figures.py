"""Small formatting helpers shared by the panels (Rich Text; server strings are never markup).

`signature` and `wrapped_rows` let a widget skip a repaint whose text did not change and ask for a
layout pass (which repaints the whole screen) only when its height did.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.text import Text

BLOCKS = " ▏▎▍▌▋▊▉█"


def line(*parts: tuple[str, str] | str) -> Text:
    """A line from (text, style) pairs or plain strings; nothing is parsed as markup."""
    out = Text()
    for part in parts:
        if isinstance(part, tuple):
            out.append(part[0], style=part[1])
        else:
            out.append(part)
    return out


def line_signature(line: RenderableType) -> object | None:
    """What a line of Text shows, characters, styles and how it wraps (Text's own equality ignores
    styles); None for any other renderable."""
    if not isinstance(line, Text):
        return None
    return (line.plain, str(line.style), tuple(line.spans), line.justify, line.overflow, line.no_wrap)


def signature(lines: Sequence[RenderableType]) -> tuple[object, ...] | None:
    """What lines show (`line_signature` of each); None when not all are Text."""
    signed = tuple(line_signature(line) for line in lines)
    return None if None in signed else signed


def wrapped_rows(lines: Sequence[RenderableType], width: int, console: Console) -> int | None:
    """Rows the lines take at `width`, wrapping included; None when not known (not all Text, no width)."""
    texts = [text for text in lines if isinstance(text, Text)]
    if not width or len(texts) != len(lines):
        return None
    # a line that fits is one row: Rich's wrap (a full layout of the line) only for the others
    return sum(
        1 if text.cell_len <= width and "\n" not in text.plain else len(text.wrap(console, width))
        for text in texts
    )


def bar(fraction: float, width: int) -> str:
    """A horizontal bar of `width` cells filled to `fraction`, with eighth-cell resolution."""
    fraction = min(1.0, max(0.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[rest] if rest else "")).ljust(width)


def histogram(
    values: Sequence[float], edges: Sequence[float], width: int, labels: Sequence[str]
) -> list[Text]:
    """One bar per bin [edges[i], edges[i+1]); counts scaled to the widest bin."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(counts)):
            if edges[i] <= v < edges[i + 1]:
                counts[i] += 1
                break
    top = max(counts) or 1
    return [
        line((f"{label:>9} ", "dim"), (bar(c / top, width), "bold"), f" {c}")
        for label, c in zip(labels, counts)
    ]


def count_bars(labels: Sequence[str], counts: Sequence[float], width: int, fmt: str = "d") -> list[Text]:
    """One text bar per label, scaled to the largest count, the count after it (`fmt`: d, or .0% for shares)."""
    top = max(counts, default=0) or 1
    pad = max((len(label) for label in labels), default=0)
    return [
        line((f"{label:>{pad}} ", "dim"), (bar(c / top, width), "bold"), f" {c:{fmt}}")
        for label, c in zip(labels, counts)
    ]
