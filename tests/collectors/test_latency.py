"""Gaps, bursts and tails from chunk arrival times."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from collectors.requests.latency import (
    ChunkEvent,
    LatencyProfile,
    Tail,
    burst_threshold_s,
    chunk_gaps_ms,
    profile,
    split_bursts,
)


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


def test_tail_of_1_to_100_ms_by_linear_interpolation():
    # numpy's default: the p-th percentile sits at index p/100 · (n − 1) = 49.5, 94.05, 98.01
    assert Tail.of(list(range(1, 101))) == Tail(100, 50.5, pytest.approx(95.05), pytest.approx(99.01), 100.0)
    assert Tail.of([]) == Tail(0, None, None, None, None)


def test_burst_threshold_at_its_edges():
    fast, slow = 2.0**-10, 2.0**-8  # exactly four times apart, the fast one under 5 ms
    assert burst_threshold_s([fast, slow]) == pytest.approx((fast * slow) ** 0.5)  # two gaps suffice
    assert burst_threshold_s([0.005, 0.05]) == pytest.approx((0.005 * 0.05) ** 0.5)  # 5 ms is still fast
    assert burst_threshold_s([0.001, 0.002, 0.003]) is None  # no clear jump
    assert burst_threshold_s([0.01, 0.1]) is None  # a clear jump, but 10 ms is a step, not a burst
    # two events at the same instant: a zero gap takes no part in the ratios
    assert burst_threshold_s([0.0, 0.0001, 0.0001, 0.02, 0.02]) == pytest.approx((0.0001 * 0.02) ** 0.5)


def test_a_stream_profile_field_by_field():
    # sent at 10.0 s; the first token at 10.1, then a 3-token step over 0.2 ms, an empty event, one more
    events = [
        ChunkEvent(10.1, 1),
        ChunkEvent(10.13, 1),
        ChunkEvent(10.1301, 1),
        ChunkEvent(10.1302, 1),
        ChunkEvent(10.15, 0),  # a role or finish chunk: no token, no gap
        ChunkEvent(10.16, 1),
    ]
    prof = profile(events, t_send_s=10.0)
    assert prof.ttft_ms == pytest.approx(100.0)
    assert prof.burst_sizes == (1, 3, 1) and prof.events == 5 and prof.tokens == 5
    # event gaps 30, 0.1, 0.1 and 29.8 ms; the steps are 30 and 29.8 ms apart
    assert prof.chunk_gaps.count == 4 and prof.chunk_gaps.max_ms == pytest.approx(30.0)
    assert (prof.step_gaps.count, prof.step_gaps.p50_ms) == (2, pytest.approx(29.9))
    plain = profile(events, t_send_s=10.0, drafting=False)  # a server that does not draft: every event a step
    assert plain.burst_sizes == (1, 1, 1, 1, 1) and plain.step_gaps.count == 4


def test_no_token_no_profile():
    empty = Tail(0, None, None, None, None)
    nothing = [ChunkEvent(1.0, 0)]
    assert profile(nothing, 0.0) == LatencyProfile(None, empty, empty, empty, (), 0, 0)
    assert split_bursts(nothing) == [] and chunk_gaps_ms(nothing) == []


def test_chunk_gaps_skip_events_without_tokens():
    assert chunk_gaps_ms([ChunkEvent(1.0, 1), ChunkEvent(1.5, 0), ChunkEvent(2.0, 1)]) == [1000.0]


@pytest.mark.parametrize(
    ("gaps_ms", "repeats"),
    [
        ([10.0, 30.0], [3, 1]),
        ([4.0, 1.0, 9.0, 9.0], [1, 5, 0, 2]),
        ([2.5], [7]),
        ([1.0, 2.0, 3.0], [1, 1, 1]),
    ],
)
def test_repeated_gaps_read_as_the_list_with_each_gap_repeated(gaps_ms, repeats):
    spelt_out = [g for g, n in zip(gaps_ms, repeats) for _ in range(n)]
    got, want = Tail.of_repeated(gaps_ms, repeats), Tail.of(spelt_out)
    assert got.count == want.count == len(spelt_out)
    assert (got.p50_ms, got.p95_ms, got.p99_ms, got.max_ms) == pytest.approx(
        (want.p50_ms, want.p95_ms, want.p99_ms, want.max_ms), rel=1e-12
    )


def test_a_chunk_that_claims_billions_of_tokens_costs_no_memory():
    # a server's SSE event can say any completion_tokens: the per-token gaps were once spelt out, one
    # float each (24 GB for 3e9, found when the stream parser's property test drew such a number).
    # In a child capped at 1 GiB of address space, so a regression fails here instead of the machine
    code = (
        "from collectors.requests.latency import ChunkEvent, profile\n"
        "p = profile([ChunkEvent(0.1, 1), ChunkEvent(0.2, 3_000_000_000)], 0.0)\n"
        "assert p.tokens == 3_000_000_001 and p.token_gaps.count == 3_000_000_000\n"
        "assert abs(p.token_gaps.max_ms - 100.0 / 3e9) < 1e-15\n"
    )
    limit = 1 << 30
    run = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
