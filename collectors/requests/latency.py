"""Latency from chunk arrival times: TTFT, inter-chunk gaps, verify-step bursts and their tails.

A verify step of a drafting server arrives as several events microseconds apart (one per
committed token), so a mean inter-token latency hides the real stalls; every gap is kept.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two events closer than this fraction of the typical step gap belong to one burst; used only
# when the server gave no step key. Intra-burst gaps are ~0.01-0.2 ms, step gaps are milliseconds.
_MIN_CLUSTER_RATIO = 4.0
_MAX_INTRA_BURST_S = 0.005


@dataclass(frozen=True, slots=True)
class ChunkEvent:
    """One streamed event: when it arrived (monotonic s) and how many tokens it committed."""

    t_s: float
    n_tokens: int
    step_key: float | None = None  # equal for events of one verify step, where the server says so


@dataclass(frozen=True, slots=True)
class Tail:
    """Percentiles of a set of gaps, in ms."""

    count: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None

    @classmethod
    def of(cls, gaps_ms: Sequence[float]) -> Tail:
        if len(gaps_ms) == 0:
            return cls(0, None, None, None, None)
        import numpy as np  # at the first tail, not at start: the dashboard's first frame does not wait for it

        p50, p95, p99 = np.percentile(np.asarray(gaps_ms, dtype=float), [50, 95, 99])
        return cls(len(gaps_ms), float(p50), float(p95), float(p99), float(max(gaps_ms)))

    @classmethod
    def of_repeated(cls, gaps_ms: Sequence[float], repeats: Sequence[int]) -> Tail:
        """`of` with each gap counted `repeats` times, without building that list (a server may
        claim any number of tokens in one chunk); numpy's linear percentile on the repeated list."""
        pairs = sorted((g, n) for g, n in zip(gaps_ms, repeats, strict=True) if n > 0)
        if not pairs:
            return cls.of([])
        ordered = [g for g, _ in pairs]
        ends = list(itertools.accumulate(n for _, n in pairs))  # the repeated list's k-th: bisect
        total = ends[-1]

        def at(k: int) -> float:
            return ordered[bisect.bisect_right(ends, k)]

        def percentile(q: float) -> float:
            h = (total - 1) * q / 100
            lo = math.floor(h)
            a, b = at(lo), at(min(lo + 1, total - 1))
            import numpy as np

            return float(np.percentile([a, b], 100 * (h - lo)))  # numpy's own interpolation between them

        return cls(total, percentile(50), percentile(95), percentile(99), ordered[-1])


def burst_threshold_s(gaps_s: Sequence[float]) -> float | None:
    """The gap that separates intra-burst gaps from step gaps, or None when all gaps look alike.

    Sorted gaps form two clusters when bursts exist; the split is the largest ratio between
    neighbours, accepted only if it is a clear jump and the lower cluster is sub-step fast.
    """
    ordered = sorted(g for g in gaps_s if g > 0)
    if len(ordered) < 2:
        return None
    ratios = [(b / a, i) for i, (a, b) in enumerate(zip(ordered, ordered[1:], strict=False))]
    best_ratio, i = max(ratios)
    if best_ratio < _MIN_CLUSTER_RATIO or ordered[i] > _MAX_INTRA_BURST_S:
        return None
    return float((ordered[i] * ordered[i + 1]) ** 0.5)


def split_bursts(events: Sequence[ChunkEvent], drafting: bool = True) -> list[list[ChunkEvent]]:
    """Group consecutive token-carrying events into verify steps.

    Uses the server's step key when every event has one (exact); otherwise the arrival gaps.
    A server known not to draft has one step per event, whatever the network did to the gaps.
    """
    token_events = [e for e in events if e.n_tokens > 0]
    if not token_events:
        return []
    if not drafting:
        same_step = [False] * (len(token_events) - 1)
    elif all(e.step_key is not None for e in token_events):
        same_step = [a.step_key == b.step_key for a, b in zip(token_events, token_events[1:], strict=False)]
    else:
        gaps = [b.t_s - a.t_s for a, b in zip(token_events, token_events[1:], strict=False)]
        threshold = burst_threshold_s(gaps)
        same_step = [threshold is not None and g < threshold for g in gaps]
    bursts = [[token_events[0]]]
    for event, joined in zip(token_events[1:], same_step, strict=False):
        if joined:
            bursts[-1].append(event)
        else:
            bursts.append([event])
    return bursts


@dataclass(frozen=True, slots=True)
class LatencyProfile:
    """Everything a request's stream says about latency."""

    ttft_ms: float | None
    chunk_gaps: Tail  # one sample per event gap (vLLM's convention)
    token_gaps: Tail  # each gap divided by the tokens in its chunk (genai-perf's convention)
    step_gaps: Tail  # gaps between verify steps: what a reader waits for
    burst_sizes: tuple[int, ...]  # tokens per verify step, in order; the first token is step 0
    events: int
    tokens: int


def chunk_gaps_ms(events: Sequence[ChunkEvent]) -> list[float]:
    """Gaps between consecutive token-carrying events, in ms."""
    token_events = [e for e in events if e.n_tokens > 0]
    return [1000.0 * (b.t_s - a.t_s) for a, b in zip(token_events, token_events[1:])]


def step_gaps_ms(events: Sequence[ChunkEvent], drafting: bool = True) -> list[float]:
    """Gaps between verify steps (last event of one burst to the first of the next), in ms."""
    bursts = split_bursts(events, drafting)
    return [1000.0 * (b[0].t_s - a[-1].t_s) for a, b in zip(bursts, bursts[1:])]


def profile(events: Sequence[ChunkEvent], t_send_s: float, drafting: bool = True) -> LatencyProfile:
    """Latency of one streamed request from its events and the time it was sent."""
    token_events = [e for e in events if e.n_tokens > 0]
    if not token_events:
        empty = Tail.of([])
        return LatencyProfile(None, empty, empty, empty, (), 0, 0)
    chunk_gaps = chunk_gaps_ms(token_events)
    later = token_events[1:]
    token_gaps = Tail.of_repeated(
        [gap / e.n_tokens for gap, e in zip(chunk_gaps, later)], [e.n_tokens for e in later]
    )
    bursts = split_bursts(token_events, drafting)
    return LatencyProfile(
        ttft_ms=1000.0 * (token_events[0].t_s - t_send_s),
        chunk_gaps=Tail.of(chunk_gaps),
        token_gaps=token_gaps,
        step_gaps=Tail.of(step_gaps_ms(token_events, drafting)),
        burst_sizes=tuple(sum(e.n_tokens for e in b) for b in bursts),
        events=len(token_events),
        tokens=sum(e.n_tokens for e in token_events),
    )
