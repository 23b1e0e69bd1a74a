"""The throughput panel's engine line: KV-cache use, a sleeping engine and preemptions, shown
only where the engine reports them (a llama-server panel keeps its three lines)."""

from __future__ import annotations

from collectors.servers.snapshot import ServerSnapshot
from tui.widgets.throughput_panel import ThroughputPanel, ThroughputView


def _lines(**fields) -> list[str]:
    snap = ServerSnapshot(url="http://s", backend="vllm", taken_at_s=1.0, status="ok", **fields)
    return [t.plain for t in ThroughputPanel().lines(ThroughputView(snap, ()))]


def test_vllm_engine_state_is_one_line() -> None:
    lines = _lines(kv_cache_usage=0.375, engine_sleeping=True, preemptions_total=7)
    assert lines[-1] == "KV cache 38 %, engine asleep, 7 preempted"


def test_no_engine_figures_no_line() -> None:
    assert len(_lines()) == 3
