"""The base of the live panels: a bordered box with a text body and, where useful, a sparkline.

Repaints cost more than the figures behind them: a new view whose lines read the same (text and
styles) leaves the body alone, and a body asks for a layout pass, which repaints the whole screen,
only when the rows it needs change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive

from tui.widgets.figures import signature, wrapped_rows
from tui.widgets.panel_body import PanelBody
from tui.widgets.sparkline import QuickSparkline


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
    Panel > PanelBody { height: auto; }
    Panel > Sparkline { height: 1fr; min-height: 1; margin-top: 0; }
    Panel.-failed { border: round $error; }
    """

    TITLE = ""
    SPARKLINE = False

    # repaint=False: the box itself never changes with the view; its body and sparkline refresh themselves
    view: reactive[Any] = reactive(None, init=False, repaint=False)
    """What the panel shows; None until the first data arrives. A view equal to the shown one is skipped."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # made here, not in compose: the App may show a view before the panel has composed
        self._body = PanelBody([Text("waiting for data…", style="dim")], classes="body")
        self._sparkline = QuickSparkline([], summary_function=max) if self.SPARKLINE else None
        self._body_shape: tuple[int, int] | None = None  # (width, rows) at the last update
        self._body_signature: tuple[object, ...] | None = None  # what the body shows: text and styles

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
        shape, shown = self._shape_of(lines), signature(lines)
        if shown is None or shown != self._body_signature or shape != self._body_shape:
            # a layout pass repaints the whole screen: ask for one only when the body's shape changes
            self._body.show(lines, layout=shape is None or shape != self._body_shape)
            self._body_shape, self._body_signature = shape, shown
        if self._sparkline is not None:
            data = list(self.series(view))
            if data != self._sparkline.data:
                self._sparkline.data = data

    def _shape_of(self, lines: Sequence[RenderableType]) -> tuple[int, int] | None:
        """The body's width and the rows it needs there, wrapping included; None when not known."""
        width = self._body.content_region.width
        rows = wrapped_rows(lines, width, self.app.console)
        return None if rows is None else (width, rows)

    def rows_needed(self) -> int | None:
        """Rows the body needs at its width now, wrapping included; None before a view or a layout."""
        return (
            None
            if self.view is None
            else wrapped_rows(self.lines(self.view), self._body.content_region.width, self.app.console)
        )

    def lines(self, view: Any) -> Sequence[RenderableType]:
        raise NotImplementedError

    def series(self, view: Any) -> list[float]:
        return []
