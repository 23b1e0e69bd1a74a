"""The server's own latency, prefix cache and finish reasons over a window, whatever the dialect.

A dialect reads its page into `LatencyCounters` (cumulative since the server started: histograms,
cache token counters, finished requests by reason) and a snapshot carries them; `window_latency`
takes two such reads, the window's first and last poll, and gives `ServerLatency`: per kind the
p50/p95/p99 in ms from the bucket deltas (collectors/servers/histograms.py: Prometheus's
histogram_quantile, exact to the width of the bucket a quantile falls in), the prefix-cache hit
ratio (cached prompt tokens over prompt tokens looked up) and the finished requests per reason.

Kinds: `ttft` (arrival at the server to its first token), `itl` (the gap between tokens as the
server observes it: vLLM one per engine step, SGLang one per token, so the two differ by the
tokens a step commits), `tpot` (per request, decode time over its tokens after the first), `e2e`
(arrival to finish) and `queue` (waiting before the first schedule). A kind the server does not
export is absent, never 0 (collectors/docs/figures.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.servers.histograms import Histogram, delta

KINDS = ("ttft", "itl", "tpot", "e2e", "queue")
QUANTILES = (0.5, 0.95, 0.99)


@dataclass(frozen=True, slots=True)
class LatencyCounters:
    """One read of a server's cumulative latency histograms, cache counters and finish reasons."""

    histograms: Mapping[str, Histogram] = field(default_factory=dict)  # by kind (KINDS)
    cache_queried_tokens: float | None = None
    cache_hit_tokens: float | None = None
    finished: Mapping[str, float] = field(default_factory=dict)  # requests by finish reason


@dataclass(frozen=True, slots=True)
class LatencyTail:
    """One kind's quantiles over a window, in ms, and how many observations they rest on."""

    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    observations: int
    mean_ms: float | None = None  # from the histogram's _sum and _count deltas, exact


@dataclass(frozen=True, slots=True)
class ServerLatency:
    """What the server measured of itself over `window_s`: tails by kind, cache, finish reasons."""

    window_s: float
    tails: Mapping[str, LatencyTail]  # only the kinds the server exports
    cache_hit_ratio: float | None = None  # None: not exported, or no prompt tokens in the window
    finished: tuple[tuple[str, int], ...] = ()  # (reason, requests) in the window, reasons sorted

    def tail(self, kind: str) -> LatencyTail | None:
        return self.tails.get(kind)


def tail_of(hist: Histogram) -> LatencyTail:
    """A window histogram's quantiles in ms (None where it holds no observation)."""

    def ms(q: float) -> float | None:
        seconds = hist.quantile(q)
        return None if seconds is None else 1000.0 * seconds

    n = int(round(hist.count))
    mean = 1000.0 * hist.sum_s / hist.count if hist.count > 0 else None
    return LatencyTail(ms(0.5), ms(0.95), ms(0.99), n, mean)


def window_latency(first: LatencyCounters, last: LatencyCounters, window_s: float) -> ServerLatency:
    """The server's figures between two reads (the window's first and last poll)."""
    tails: dict[str, LatencyTail] = {}
    for kind in KINDS:
        grown = delta(first.histograms.get(kind), last.histograms.get(kind))
        if grown is not None:
            tails[kind] = tail_of(grown)
    return ServerLatency(window_s, tails, _hit_ratio(first, last), _finished(first, last))


def _hit_ratio(first: LatencyCounters, last: LatencyCounters) -> float | None:
    values = (
        first.cache_queried_tokens,
        first.cache_hit_tokens,
        last.cache_queried_tokens,
        last.cache_hit_tokens,
    )
    if any(v is None for v in values):
        return None
    q0, h0, q1, h1 = (float(v or 0.0) for v in values)
    queried, hits = q1 - q0, h1 - h0
    return hits / queried if queried > 0 and 0 <= hits <= queried else None


def _finished(first: LatencyCounters, last: LatencyCounters) -> tuple[tuple[str, int], ...]:
    grown = {r: int(round(n - first.finished.get(r, 0.0))) for r, n in last.finished.items()}
    return tuple(sorted((r, n) for r, n in grown.items() if n > 0))
