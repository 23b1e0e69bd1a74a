"""The base of the live panels: a bordered box with a text body and, where useful, a sparkline.

One widget draws both, row by row (tui/widgets/panel_rows.py), and a new view repaints only the
rows whose cells changed. Each widget a repaint's frame crosses costs Textual its styles, colours
and cuts whether it changed or not: as a box holding a Static and a Sparkline, the four panels
were fifteen widgets in every frame a poll drew, and their repaints were a third of what the
dashboard spent on a real llama-server (measured by turning them off).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from tui.widgets.figures import signature, wrapped_rows
from tui.widgets.panel_rows import few_point_rows, text_rows
from tui.widgets.sparkline import sparkline_strips


class Panel(Widget):
    """Subclasses implement `lines(view)` and, with a sparkline, `series(view)`; the App assigns `view`.

    The text takes the rows it needs from the top; the sparkline the rest, at least one, as the
    box and its two children were laid out before (what does not fit is cut at the bottom).
    """

    DEFAULT_CSS = """
    Panel {
        border: round $primary 60%;
        border-title-color: $text;
        border-title-style: bold;
        padding: 0 1;
        height: 100%;
    }
    Panel > .panel--sparkline-max { color: $primary; }
    Panel > .panel--sparkline-min { color: $primary 30%; }
    Panel.-failed { border: round $error; }
    """
    COMPONENT_CLASSES = {"panel--sparkline-max", "panel--sparkline-min"}  # Textual's Sparkline colours
    ALLOW_SELECT = False  # its rows carry no offsets for Textual's mouse selection (the terminal's works)

    TITLE = ""
    SPARKLINE = False

    # repaint=False: the panel compares its rows and repaints those that changed
    view: reactive[Any] = reactive(None, init=False, repaint=False)
    """What the panel shows; None until the first data arrives. A view equal to the shown one is skipped."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[RenderableType] = [Text("waiting for data…", style="dim")]
        self._series: list[float] = []
        self._signature: tuple[object, ...] | None = None  # what the text shows: characters and styles
        self._rows: list[Strip] = []
        self._rows_key: tuple[object, ...] | None = None  # what the rows were drawn for; None: draw again
        self._spark_styles: dict[object, Style] = {}  # by colour and by bar height
        self._line_rows: dict[
            object, list[Strip]
        ] = {}  # the text's rows by line, at the drawn width and style
        self._line_rows_key: tuple[object, ...] | None = None
        self._needed: int | None = None  # rows_needed's answer, for the text and width in _needed_key
        self._needed_key: tuple[object, ...] | None = None

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows_key = None  # a theme or class change: colours may differ
        self._spark_styles.clear()

    def watch_view(self, view: Any) -> None:
        if view is None:
            return
        lines = list(self.lines(view))
        series = list(self.series(view)) if self.SPARKLINE else []
        shown = signature(lines)
        if shown is not None and shown == self._signature and series == self._series:
            return
        self._lines, self._signature, self._series = lines, shown, series
        self._repaint_changed_rows()

    def _repaint_changed_rows(self) -> None:
        shown, shown_key = self._rows, self._rows_key
        self._rows_key = None
        if shown_key is None or not self.size.width:
            self.refresh()
            return
        rows = self._rows_now()
        if self._rows_key != shown_key or len(rows) != len(shown):
            self.refresh()
            return
        width = self.size.width
        changed = [Region(0, y, width, 1) for y, (old, new) in enumerate(zip(shown, rows)) if old != new]
        if changed:
            self.refresh(*changed)

    def render_line(self, y: int) -> Strip:
        rows = self._rows_now()
        return rows[y] if 0 <= y < len(rows) else Strip.blank(self.size.width, self.visual_style.rich_style)

    def _rows_now(self) -> list[Strip]:
        """The text's rows, then the sparkline's, at the size the panel has now."""
        width, height = self.size
        key = (width, height)
        if key == self._rows_key:
            return self._rows
        style = self.visual_style.rich_style
        drawn = self._line_rows if self._line_rows_key == (width, style) else None
        rows, self._line_rows = text_rows(
            self._lines, width, style, self.app.console, self.app.console_options, drawn
        )
        self._line_rows_key = (width, style)
        if self.SPARKLINE and len(rows) < height:
            rows += self._sparkline_rows(width, height - len(rows), style)
        self._rows, self._rows_key = rows[:height], key
        return self._rows

    def _sparkline_rows(self, width: int, height: int, style: Style) -> list[Strip]:
        _, background = self.background_colors
        low = (background + self.get_component_styles("panel--sparkline-min").color).rich_color
        high = (background + self.get_component_styles("panel--sparkline-max").color).rich_color
        if len(self._series) < 2:
            return few_point_rows(len(self._series), width, height, style, low, high)
        return sparkline_strips(self._series, width, height, max, style, low, high, self._spark_styles)

    def rows_needed(self) -> int | None:
        """Rows the text needs at the panel's width now, wrapping included; None before a view or a layout.

        Asked at every poll (DashboardScreen.show_snapshot): counted once per text and width, from
        the lines the panel shows, not by building them again."""
        if self.view is None:
            return None
        key = (self._signature, self.size.width)
        if key != self._needed_key or self._signature is None:
            self._needed = wrapped_rows(self._lines, self.size.width, self.app.console)
            self._needed_key = key
        return self._needed

    def lines(self, view: Any) -> Sequence[RenderableType]:
        raise NotImplementedError

    def series(self, view: Any) -> list[float]:
        return []
