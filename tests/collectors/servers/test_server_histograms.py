"""Windowed quantiles from a server's cumulative histograms, worked by hand.

Prometheus's histogram_quantile (promql/quantile.go BucketQuantile): rank = q·N; the first bucket
whose cumulative count reaches the rank; linear interpolation from the previous bound (0 for the
first bucket) to its own; the +Inf bucket gives the highest finite bound.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from collectors import promtext
from collectors.servers import histograms
from collectors.servers.latency import LatencyCounters, window_latency
from collectors.servers.llamacpp import latency as llamacpp_latency
from collectors.servers.rolling import rolling_latency
from collectors.servers.snapshot import ServerSnapshot
from collectors.servers.vllm import latency as vllm_latency
from tests.support import server_latency

BOUNDS = (0.1, 0.2, 0.4, math.inf)


@pytest.mark.parametrize(
    ("q", "seconds"),
    [
        (0.1, 0.05),  # rank 1 of 10, first bucket (2 there): 0 + 0.1 · 1/2
        (0.5, 0.175),  # rank 5, second bucket (counts 2→6): 0.1 + 0.1 · (5 − 2)/4
        (0.8, 0.2 + 0.2 * 2 / 3),  # rank 8, third bucket (6→9): 0.2 + 0.2 · (8 − 6)/3
        (0.95, 0.4),  # rank 9.5 lies in +Inf: the highest finite bound
    ],
)
def test_quantile_interpolates_inside_the_bucket_as_prometheus_does(q: float, seconds: float) -> None:
    assert histograms.bucket_quantile(q, BOUNDS, (2, 6, 9, 10)) == pytest.approx(seconds)


def test_an_empty_window_has_no_quantile() -> None:
    assert histograms.bucket_quantile(0.5, BOUNDS, (0, 0, 0, 0)) is None


def test_a_window_is_the_bucket_deltas_and_a_restart_gives_none() -> None:
    before = histograms.Histogram(BOUNDS, (1, 2, 2, 2), 0.3)
    after = histograms.Histogram(BOUNDS, (2, 6, 9, 10), 2.3)
    grown = histograms.delta(before, after)
    assert grown is not None and grown.counts == (1, 4, 7, 8) and grown.sum_s == pytest.approx(2.0)
    assert histograms.delta(after, before) is None  # counts went down: the server restarted


PAGE = """# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} {a1}
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.2",model_name="m"} {a2}
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} {a2}
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} {a2}
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.1",model_name="m"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.2",model_name="m"} {b2}
vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf",model_name="m"} {b2}
vllm:time_to_first_token_seconds_count{engine="1",model_name="m"} {b2}
vllm:time_to_first_token_seconds_sum{engine="1",model_name="m"} 1.0
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} {q}
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} {h}
# TYPE vllm:request_success counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} {stop}
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 5.0
vllm:request_success_total{engine="0",finished_reason="abort",model_name="m"} 0.0
"""


def _read(**values: float) -> LatencyCounters:
    text = PAGE
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    counters = vllm_latency.read(promtext.parse(text))
    assert counters is not None
    return counters


def test_vllm_window_sums_engines_and_reads_cache_and_reasons() -> None:
    first = _read(a1=1, a2=1, b2=0, q=100, h=10, stop=2)
    last = _read(a1=2, a2=3, b2=2, q=300, h=110, stop=6)
    latency = window_latency(first, last, 10.0)
    ttft = latency.tail("ttft")
    # window: engine 0 adds 1 at ≤0.1 and 1 in (0.1, 0.2]; engine 1 adds 2 in (0.1, 0.2]:
    # cumulative (1, 4, 4); p50: rank 2 in the second bucket: 0.1 + 0.1 · (2 − 1)/3 s
    assert ttft is not None and ttft.observations == 4
    assert ttft.p50_ms == pytest.approx(100 + 100 / 3)
    assert latency.cache_hit_ratio == pytest.approx(100 / 200)  # hits grew 100 of 200 queried tokens
    assert latency.finished == (("stop", 4),)  # length and abort did not move
    assert latency.tail("queue") is None  # not on the page: unknown, not 0


def test_llama_server_has_a_prompt_cache_ratio_and_no_latency_histograms():
    """The captured draft-simple pages: processed prompt tokens 59 → 260 (excluding cached), cached
    150 → 445, so the window looked up 201 + 295 = 496 tokens and found 295 of them."""
    data = Path(__file__).parents[2] / "data" / "llama-server"
    first, last = (
        llamacpp_latency.read(promtext.parse((data / f"draft-simple.metrics.{when}.txt").read_text()))
        for when in ("before", "after")
    )
    assert first is not None and last is not None
    latency = window_latency(first, last, 5.0)
    assert latency.cache_hit_ratio == pytest.approx(295 / 496)
    assert latency.tails == {} and latency.finished == ()


def _poll(t_s: float, counters: LatencyCounters, **extra) -> ServerSnapshot:
    return ServerSnapshot(
        url="u", backend="vllm", taken_at_s=t_s, status="ok", latency_counters=counters, **extra
    )


def test_the_rolling_window_starts_after_a_restart_and_after_a_sweep():
    """tests/support/server_latency.py's two reads bracket the window (TTFT p50 116.7 ms over 10
    observations). A poll of the old process before a restart, or one before `since_s`, is not
    the window's start: from it the counters would run backwards (no delta) or hold other traffic."""
    before, after = server_latency.BEFORE, server_latency.AFTER
    polls = [_poll(1.0, after), _poll(5.0, before, restarted=True), _poll(10.0, after)]
    latency = rolling_latency(polls, 30.0)
    assert latency is not None and latency.window_s == 5.0
    ttft = latency.tail("ttft")
    assert ttft is not None and ttft.observations == 10
    assert ttft.p50_ms == pytest.approx(server_latency.TTFT_MS["0.5"])
    swept = [_poll(1.0, before), _poll(5.0, before), _poll(10.0, after)]  # a sweep ended at 4 s
    assert rolling_latency(swept, 30.0, since_s=4.0).window_s == 5.0
    assert rolling_latency(swept, 3.0) is None  # one poll in the last 3 s: no window yet
