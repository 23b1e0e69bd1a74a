"""Latency tails: where inter-chunk gaps fall, and how many tokens each verify step delivered."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from collectors.fmt import num
from collectors.requests import latency
from collectors.requests.record import RequestRecord
from tui.widgets.figures import bar, histogram, line

EDGES_MS = (0.0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, float("inf"))
LABELS = ("<0.5 ms", "0.5-1", "1-2", "2-5", "5-10", "10-20", "20-50", "50-100", "100-200", "≥200 ms")


@dataclass(frozen=True, slots=True)
class LatencyView:
    records: tuple[RequestRecord, ...]  # the most recent requests, pooled


class LatencyPanel(Static):
    DEFAULT_CSS = "LatencyPanel { height: auto; padding: 0 1; }"

    view: reactive[LatencyView | None] = reactive(None, layout=True)
    """The requests whose gaps are pooled."""

    def render(self) -> RenderableType:
        v = self.view
        if v is None or not v.records:
            return Text("no requests yet: press r to probe the server", style="dim")
        # the requests whose chunks spectop timed (probe, sweep, proxy): a request read from the
        # server's log has its first token and its end, not its chunks, and its table row says "—"
        streamed = [r for r in v.records if r.latency.chunk_gaps.count]
        if not streamed:
            return Text(
                "no streamed requests yet: requests read from the server's log have no chunk times; "
                "press r to probe the server",
                style="dim",
            )
        gaps = [g for r in streamed for g in latency.chunk_gaps_ms(r.events)]
        steps = Counter(size for r in streamed for size in r.latency.burst_sizes[1:])
        tail = latency.Tail.of(gaps)
        title = line(
            (f"inter-chunk gaps of the last {len(streamed)} streamed requests ", "bold"),
            ("p50 ", "dim"),
            num(tail.p50_ms, ".1f"),
            ("  p95 ", "dim"),
            num(tail.p95_ms, ".1f"),
            ("  p99 ", "dim"),
            num(tail.p99_ms, ".1f"),
            ("  max ", "dim"),
            num(tail.max_ms, ".1f", " ms"),
        )
        hist = histogram(gaps, EDGES_MS, 24, LABELS)
        top = max(steps.values(), default=1)
        bursts = [line(("tokens per verify step", "bold"))] + [
            line((f"{size:>4} ", "dim"), (bar(count / top, 16), "bold green"), f" {count}")
            for size, count in sorted(steps.items())
        ]
        return Group(title, Columns([Group(*hist), Group(*bursts)], padding=(0, 4)))
