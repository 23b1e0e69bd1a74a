"""Gaps, bursts and tails from chunk arrival times."""

from __future__ import annotations

import pytest

from collectors.latency import ChunkEvent, Tail, burst_threshold_s, profile, split_bursts


def cycle_stream(
    bursts: list[int], step_s: float, intra_s: float = 20e-6, t0: float = 0.05
) -> list[ChunkEvent]:
    events, t = [], t0
    for size in bursts:
        for i in range(size):
            events.append(ChunkEvent(t + i * intra_s, 1))
        t += step_s
    return events


def test_the_reviews_idealized_cycle():
    # Four tokens every 40 ms in one burst: mean gap 10 ms, but a quarter of the gaps are 40 ms.
    events = cycle_stream([4] * 25, 0.040)
    prof = profile(events, t_send_s=0.0)
    assert prof.burst_sizes == (4,) * 25
    assert prof.step_gaps.p50_ms == pytest.approx(40.0 - 3 * 0.02, abs=0.01)
    assert prof.chunk_gaps.p50_ms < 1.0
    assert prof.chunk_gaps.max_ms == pytest.approx(39.94, abs=0.01)
    assert prof.ttft_ms == pytest.approx(50.0)


def test_steady_stream_has_no_bursts():
    events = cycle_stream([1] * 50, 0.010)
    assert burst_threshold_s([e2.t_s - e1.t_s for e1, e2 in zip(events, events[1:])]) is None
    prof = profile(events, 0.0)
    assert prof.burst_sizes == (1,) * 50
    assert prof.step_gaps.p99_ms == pytest.approx(10.0)


def test_mixed_bursts_are_recovered():
    sizes = [1, 3, 1, 2, 5, 1, 1, 4]
    prof = profile(cycle_stream(sizes, 0.030), 0.0)
    assert prof.burst_sizes == tuple(sizes)
    assert prof.tokens == sum(sizes)


def test_not_drafting_means_one_step_per_event():
    events = cycle_stream([3, 3], 0.030)
    assert [len(b) for b in split_bursts(events, drafting=False)] == [1] * 6


def test_per_token_view_divides_gaps_by_chunk_tokens():
    events = [ChunkEvent(0.0, 1), ChunkEvent(0.030, 3), ChunkEvent(0.060, 1)]
    prof = profile(events, 0.0)
    assert prof.chunk_gaps.count == 2
    assert prof.token_gaps.count == 4  # three tokens shared the first gap
    assert prof.token_gaps.max_ms == pytest.approx(30.0)
    assert prof.token_gaps.p50_ms == pytest.approx(10.0)


def test_tail_percentiles_and_empty():
    tail = Tail.of(list(range(1, 101)))
    assert (tail.p50_ms, tail.max_ms) == (pytest.approx(50.5), 100)
    assert tail.p99_ms == pytest.approx(99.01)
    assert Tail.of([]).p50_ms is None
    assert profile([], 0.0).ttft_ms is None
