"""The base of the live panels: a bordered box with a text body and, where useful, a sparkline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Sparkline, Static


class Panel(Vertical):
    """Subclasses implement `lines(view)` and, with a sparkline, `series(view)`; the App assigns `view`."""

    DEFAULT_CSS = """
    Panel {
        border: round $primary 60%;
        border-title-color: $text;
        border-title-style: bold;
        padding: 0 1;
        height: 100%;
    }
    Panel > Static { height: auto; }
    Panel > Sparkline { height: 1fr; min-height: 1; margin-top: 0; }
    Panel.-failed { border: round $error; }
    """

    TITLE = ""
    SPARKLINE = False

    view: reactive[Any] = reactive(None, init=False)
    """What the panel shows; None until the first data arrives. A view equal to the shown one is skipped."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # made here, not in compose: the App may show a view before the panel has composed
        self._body = Static(Text("waiting for data…", style="dim"), classes="body")
        self._sparkline = Sparkline([], summary_function=max) if self.SPARKLINE else None
        self._body_shape: tuple[int, int] | None = None  # (width, rows) at the last update

    def compose(self) -> ComposeResult:
        yield self._body
        if self._sparkline is not None:
            yield self._sparkline

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def watch_view(self, view: Any) -> None:
        if view is None:
            return
        lines = self.lines(view)
        # a layout pass repaints the whole screen: ask for one only when the body's shape changes
        shape = self._shape_of(lines)
        self._body.update(Group(*lines), layout=shape is None or shape != self._body_shape)
        self._body_shape = shape
        if self._sparkline is not None:
            self._sparkline.data = list(self.series(view))

    def _shape_of(self, lines: Sequence[RenderableType]) -> tuple[int, int] | None:
        """The body's width and the rows it needs there, wrapping included; None when not known."""
        width = self._body.content_region.width
        texts = [line for line in lines if isinstance(line, Text)]
        if not width or len(texts) != len(lines):
            return None
        return width, sum(len(text.wrap(self.app.console, width)) for text in texts)

    def lines(self, view: Any) -> Sequence[RenderableType]:
        raise NotImplementedError

    def series(self, view: Any) -> list[float]:
        return []
