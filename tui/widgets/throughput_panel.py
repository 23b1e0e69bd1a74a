"""Throughput and batch: tokens/s now, requests in flight against slots, their history."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from collectors.fmt import num, pct
from collectors.servers.snapshot import ServerSnapshot
from tui.widgets.figures import line
from tui.widgets.panel import Panel


@dataclass(frozen=True, slots=True)
class ThroughputView:
    snapshot: ServerSnapshot
    history_tok_s: tuple[float, ...]  # one figure per poll, for the sparkline
    recent_tok_s: float | None = None  # over the last `recent_s` of polls (LiveLedger.recent_tok_s)
    recent_s: float | None = None  # None: the latest poll's own figure is shown


class ThroughputPanel(Panel):
    TITLE = "throughput & batch"
    SPARKLINE = True

    def lines(self, view: ThroughputView) -> list[Text]:
        s = view.snapshot
        exact = "" if s.live_tok_s_exact or s.live_tok_s is None else " ≥"
        busy = f"{num(s.slots_busy, 'd')}/{num(s.slots_total, 'd')} slots"
        waiting = f", {s.requests_deferred} waiting" if s.requests_deferred else ""
        if view.recent_s is None:
            tok_s = line((f"{exact}{num(s.live_tok_s, '.1f')} tok/s", "bold"))
        else:  # the window said: one poll's second swings by a verify step's tokens
            tok_s = line(
                (f"{exact}{num(view.recent_tok_s, '.1f')} tok/s", "bold"),
                (f" over {view.recent_s:g} s", "dim"),
            )
        out = [
            tok_s,
            line(busy + waiting),
            line(("batch/decode ", "dim"), num(s.busy_slots_per_decode, ".2f")),
        ]
        if s.kv_cache_usage is not None or s.engine_sleeping:  # vLLM, SGLang: KV use, sleep (idle power)
            asleep = ", engine asleep" if s.engine_sleeping else ""
            preempted = f", {s.preemptions_total} preempted" if s.preemptions_total else ""
            out.append(line(("KV cache ", "dim"), pct(s.kv_cache_usage) + asleep + preempted))
        return out

    def series(self, view: ThroughputView) -> list[float]:
        return list(view.history_tok_s)
