"""SGLang's latency histograms, cached-token counters and aborts, as `LatencyCounters`.

Sources (sglang-0.5.23 wheel, `sglang/srt/observability/metrics_collector.py`): the tokenizer's
histograms `sglang:time_to_first_token_seconds` (:2040-2048, labelled `is_streaming`),
`sglang:inter_token_latency_seconds` (:2050-2055; one observation per *token*: a chunk's gap is
divided by its tokens, :2161-2184), `sglang:request_time_per_output_token_seconds` (:2057-2065,
stop and length finishes only) and `sglang:e2e_request_latency_seconds` (:2067-2072); the
scheduler's `sglang:queue_time_seconds` (:837-882, the wait before a request's first forward,
`req_time_stats.py:809-813`); at each finish (`observe_one_finished_request`, :2092-2159)
`sglang:prompt_tokens_total` and `sglang:cached_tokens_total{cache_source}` (device, host and
storage, or `total` from servers that do not split them: one or the other per request, so their
sum is the cached tokens) and `sglang:num_requests_total`; `sglang:num_aborted_requests_total`
(:1959-1963) when an abort is sent.

Pitfalls handled: SGLang's page has no finish reason but aborts, so the reasons are `abort` and
`completed` (every other finish); `is_streaming` splits TTFT, TPOT and e2e, so buckets are summed
over it; the scheduler's queue histogram is copied per TP rank with
--enable-metrics-for-all-schedulers and counted once; the cache ratio is over finished requests'
prompts (cached over prompt tokens), not the scheduler's `sglang:cache_hit_rate` gauge, which holds
its last batch's value and cannot be windowed.
"""

from __future__ import annotations

from collections.abc import Mapping

from collectors.promtext import Sample
from collectors.servers import histograms, series
from collectors.servers.latency import LatencyCounters

Samples = Mapping[str, list[Sample]]
COPIES = ("tp_rank", "pp_rank", "moe_ep_rank")  # labels whose values repeat one scheduler's figure
HISTOGRAMS: Mapping[str, str] = {
    "ttft": "sglang:time_to_first_token_seconds",
    "itl": "sglang:inter_token_latency_seconds",
    "tpot": "sglang:request_time_per_output_token_seconds",
    "e2e": "sglang:e2e_request_latency_seconds",
    "queue": "sglang:queue_time_seconds",
}
BUCKETS = tuple(HISTOGRAMS.values())  # the bucket lines a poll parses (answers.py `parse_metrics`)
PROMPT = "sglang:prompt_tokens_total"
CACHED = "sglang:cached_tokens_total"
REQUESTS = "sglang:num_requests_total"
ABORTED = "sglang:num_aborted_requests_total"


def read(metrics: Samples | None) -> LatencyCounters | None:
    """The page's counters; None when it has no latency histogram (no --enable-metrics, no page)."""
    if metrics is None:
        return None
    found = {
        kind: hist
        for kind, name in HISTOGRAMS.items()
        if (hist := histograms.read(metrics, name, dedupe=COPIES)) is not None
    }
    if not found:
        return None
    # labelled counters appear with their first finish: absent from a page with histograms is 0
    requests, aborted = (series.total(metrics, n) or 0.0 for n in (REQUESTS, ABORTED))
    return LatencyCounters(
        histograms=found,
        cache_queried_tokens=series.total(metrics, PROMPT) or 0.0,
        cache_hit_tokens=series.total(metrics, CACHED) or 0.0,
        finished={"completed": max(0.0, requests - aborted), "abort": aborted},
    )
