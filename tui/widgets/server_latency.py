"""The server's own latency, above spectop's in the latency tab: its tails over the rolling window
(its histograms' bucket deltas, collectors/servers/latency.py), prefix-cache hit ratio, finish
reasons, and client − server TTFT p50.

spectop's TTFT runs from sending to the first chunk read, the server's from arrival to its first
token: the difference is the network and the client's own queueing. The server's window also holds
other clients' requests, so it is said as a difference of medians, not per request. Its own widget,
so a poll redraws this line and never the gap histogram below it. Finish reasons are the server's
label values: shown through Text, never parsed as markup. Every poll brings new figures but the
text seldom changes: the line repaints only when it does, and asks for a layout pass (which repaints
the whole screen) only when its height does. While its tab is hidden it does not repaint at all:
a hidden widget's repaint makes the next frame map the whole screen again (Textual's compositor
drops its map for any dirty widget it does not show), once a poll; showing the tab repaints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from collectors.fmt import num, pct
from collectors.servers.latency import ServerLatency
from tui.widgets.figures import line, signature, wrapped_rows

KIND_NAMES = (("ttft", "TTFT"), ("itl", "ITL"), ("tpot", "TPOT"), ("e2e", "e2e"), ("queue", "queue"))
Part = tuple[str, str] | str


@dataclass(frozen=True, slots=True)
class ServerLatencyView:
    latency: ServerLatency | None = None  # None: fewer than two polls, or not exported
    exported: bool = True  # False: the server's /metrics has no latency histograms
    client_ttft_p50_ms: float | None = None  # spectop's own requests shown below


class ServerLatencyLine(Static):
    DEFAULT_CSS = "ServerLatencyLine { height: auto; padding: 0 1; }"

    view: reactive[ServerLatencyView] = reactive(ServerLatencyView, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines = self._lines_of(ServerLatencyView())
        self._shown = signature(self._lines)
        self._unpainted = False  # figures changed while the tab was hidden: repaint when shown

    def watch_view(self, view: ServerLatencyView) -> None:
        lines = self._lines_of(view)
        shown = signature(lines)
        if shown == self._shown:
            return
        width = self.content_region.width  # 0 while the latency tab is hidden
        if not width:
            self._lines, self._shown, self._unpainted = lines, shown, True
            return
        console = self.app.console
        rows, shown_rows = wrapped_rows(lines, width, console), wrapped_rows(self._lines, width, console)
        self._lines, self._shown = lines, shown
        self.refresh(layout=bool(width) and (rows is None or rows != shown_rows))

    def on_show(self) -> None:
        if self._unpainted:
            self._unpainted = False
            self.refresh(layout=True)

    def render(self) -> Group:
        return Group(*self._lines)

    @staticmethod
    def _lines_of(v: ServerLatencyView) -> list[Text]:
        s = v.latency
        if s is None:
            why = "waiting for two polls" if v.exported else "its /metrics has no latency histograms"
            return [line(("server latency ", "bold"), (why, "dim"))]
        tails: list[Part] = [("server ", "bold"), (f"last {s.window_s:.0f} s", "dim")]
        if not s.tails:
            tails.append(("  its /metrics has no latency histograms", "dim"))
        for kind, name in KIND_NAMES:
            tail = s.tail(kind)
            if tail is not None and tail.observations:
                tails += [(f"  {name} p50/p95 ", "dim"), f"{num(tail.p50_ms)}/{num(tail.p95_ms)} ms"]
        more: list[Part] = [("prefix cache ", "dim"), pct(s.cache_hit_ratio)]
        if s.finished:
            more += [("  finished ", "dim"), ", ".join(f"{reason} {n}" for reason, n in s.finished)]
        server_ttft = s.tail("ttft")
        if v.client_ttft_p50_ms is not None and server_ttft is not None and server_ttft.p50_ms is not None:
            more += [
                ("  client − server TTFT p50 ", "dim"),
                f"{v.client_ttft_p50_ms - server_ttft.p50_ms:+.1f} ms",
                (" (network and client queueing)", "dim"),
            ]
        return [line(*tails), line(*more)]
