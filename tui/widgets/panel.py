"""The base of the live panels: a bordered box with a text body and, where useful, a sparkline."""

from __future__ import annotations

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

    view: reactive[Any] = reactive(None, always_update=True, init=False)
    """What the panel shows; None until the first data arrives."""

    def compose(self) -> ComposeResult:
        yield Static(Text("waiting for data…", style="dim"), classes="body")
        if self.SPARKLINE:
            yield Sparkline([], summary_function=max)

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def watch_view(self, view: Any) -> None:
        if view is None:
            return
        self.query_one(".body", Static).update(Group(*self.lines(view)))
        if self.SPARKLINE:
            self.query_one(Sparkline).data = list(self.series(view))

    def lines(self, view: Any) -> list[RenderableType]:
        raise NotImplementedError

    def series(self, view: Any) -> list[float]:
        return []
