"""The top bar: which server and which meter, in what state, and the warnings that matter most.

Every poll brings a new snapshot, but the bar's text seldom changes: it repaints only when its
lines do, and asks for a layout pass (which repaints the whole screen) only when its height does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from rich.console import Group, RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from collectors.meters import MeterInfo
from collectors.servers.snapshot import ServerSnapshot
from tui.widgets.figures import line, signature, wrapped_rows


@dataclass(frozen=True, slots=True)
class SourceView:
    server_url: str
    snapshot: ServerSnapshot | None
    meter: MeterInfo | None
    meter_error: str | None
    paused: bool
    void_warning: str | None = None
    log_state: tuple[str, bool] | None = None  # the server log's reader: what it does, and if it cannot


def short_model(model: str | None) -> str:
    """llama-server reports the -m path as the model name: show the file name."""
    return PurePath(model).name if model else "—"


class SourceBar(Static):
    DEFAULT_CSS = """
    SourceBar { height: auto; padding: 0 1; background: $boost; }
    """

    view: reactive[SourceView | None] = reactive(None, repaint=False)
    """The sources and their state."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[RenderableType] = [Text("spectop: connecting…")]
        self._shown: tuple[object, ...] | None = signature(self._lines)
        self._rows: int | None = None  # rows at the width of the last layout pass

    def watch_view(self, v: SourceView | None) -> None:
        if v is None:
            return
        lines: list[RenderableType] = [self._server_line(v), self._meter_line(v), *self._warnings(v)]
        shown = signature(lines)
        if shown is not None and shown == self._shown:
            return
        rows = wrapped_rows(lines, self.content_region.width, self.app.console)
        self._lines, self._shown = lines, shown
        self.refresh(layout=rows is None or rows != self._rows)
        self._rows = rows

    def render(self) -> Group:
        return Group(*self._lines)

    def _server_line(self, v: SourceView) -> Text:
        s = v.snapshot
        state = "PAUSED " if v.paused else ""
        if s is None:
            return line(
                (state, "bold yellow"), ("server ", "dim"), (v.server_url, "bold"), ("  connecting…", "dim")
            )
        status_style = {"ok": "green", "loading": "yellow"}.get(s.status, "red")
        drafting = {
            True: ("drafting", "green"),
            False: ("not drafting", "dim"),
            None: ("drafting unknown", "dim"),
        }[s.drafting]
        if v.void_warning and not s.drafting:  # a draft configured and nothing drafted is no plain server
            drafting = ("VOID", "bold red")
        return line(
            (state, "bold yellow"),
            (f"● {s.status} ", status_style),
            (s.backend + " ", "bold"),
            (v.server_url, ""),
            ("  model ", "dim"),
            short_model(s.model),
            ("  build ", "dim"),
            s.build or "—",
            ("  slots ", "dim"),
            str(s.slots_total or "—"),
            "  ",
            drafting,
        )

    def _meter_line(self, v: SourceView) -> Text:
        m = v.meter
        if m is None:
            return line(
                ("meter ", "dim"), ("none: energy is not measured (--meter auto picks one)", "yellow")
            )
        method_style = "bold yellow" if m.method == "estimate" else "green"
        devices = ", ".join(m.devices) or m.name
        return line(
            ("meter ", "dim"),
            (m.name + " ", "bold"),
            (m.method.upper() if m.method == "estimate" else m.method, method_style),
            ("  ", ""),
            (m.boundary, ""),
            ("  ", ""),
            (devices, "dim"),
            ("  every ", "dim"),
            f"{m.update_period_s:g} s",
        )

    def _warnings(self, v: SourceView) -> list[Text]:
        out = []
        s = v.snapshot
        if v.void_warning:
            out.append(Text("⚠ " + v.void_warning, style="bold red"))
        if s is not None and s.error:
            out.append(Text(f"⚠ {s.error}" + (f" ({s.fix})" if s.fix else ""), style="red"))
        elif s is not None and s.metrics_status != "ok":
            out.append(Text(f"/metrics {s.metrics_status}", style="yellow"))
        if v.meter_error:
            out.append(Text(f"⚠ meter: {v.meter_error}", style="red"))
        if v.log_state is not None:
            text, problem = v.log_state
            # a routing proxy's line takes the log's place (tui/routing.py: routing follows no log)
            label = "proxy " if text.startswith("routing ") else "server log "
            out.append(Text(f"⚠ server log: {text}", style="red") if problem else line((label, "dim"), text))
        return out
