"""vLLM's latency histograms, prefix-cache counters and finish reasons, as `LatencyCounters`.

Sources (vllm-0.11.0 wheel, `vllm/v1/metrics/loggers.py`): `vllm:prefix_cache_queries` and
`vllm:prefix_cache_hits` (:258-272, tokens looked up and tokens found, counters; before 0.9
`vllm:gpu_prefix_cache_*`, :224-249), `vllm:request_success{finished_reason}` (:299-310, reasons
`stop`, `length`, `abort` from `vllm/v1/engine/__init__.py:21`; later releases add `error` and
`repetition`), and the histograms `vllm:time_to_first_token_seconds` (:375-385, from arrival at the
frontend), `vllm:inter_token_latency_seconds` (:402-411, one observation per request per engine
step, so a verify step that commits several tokens is one gap; 0.10.x and before:
`vllm:time_per_output_token_seconds`, :389-400, the same observations),
`vllm:request_time_per_output_token_seconds` (:413-423, per request, from 0.11),
`vllm:e2e_request_latency_seconds` and `vllm:request_queue_time_seconds` (:426-445).

Pitfalls handled: every series carries `engine` and `model_name`, so buckets are summed over
engines (data parallelism); a server run with `--disable-log-stats` has none of these and reads as
no counters (None), not as zero latency; the deprecated names are read only where the current
one is absent, so no observation counts twice.
"""

from __future__ import annotations

from collections.abc import Mapping

from collectors.promtext import Sample
from collectors.servers import histograms, series
from collectors.servers.latency import LatencyCounters

Samples = Mapping[str, list[Sample]]

# kind -> names, the current one first (an older server's name after it)
HISTOGRAMS: Mapping[str, tuple[str, ...]] = {
    "ttft": ("vllm:time_to_first_token_seconds",),
    "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    "tpot": ("vllm:request_time_per_output_token_seconds",),
    "e2e": ("vllm:e2e_request_latency_seconds",),
    "queue": ("vllm:request_queue_time_seconds",),
}
# the histograms whose bucket lines a poll parses (collectors/servers/answers.py `parse_metrics`)
BUCKETS = tuple(name for names in HISTOGRAMS.values() for name in names)
CACHE_QUERIES = ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")
CACHE_HITS = ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
FINISHED = "vllm:request_success_total"


def _first_total(metrics: Samples, names: tuple[str, ...]) -> float | None:
    return next((v for v in (series.total(metrics, n) for n in names) if v is not None), None)


def read(metrics: Samples | None) -> LatencyCounters | None:
    """The page's counters; None when it has no latency histogram at all (stats off, no page)."""
    if metrics is None:
        return None
    found: dict[str, histograms.Histogram] = {}
    for kind, names in HISTOGRAMS.items():
        hist = next((h for h in (histograms.read(metrics, n) for n in names) if h is not None), None)
        if hist is not None:
            found[kind] = hist
    if not found:
        return None
    return LatencyCounters(
        histograms=found,
        cache_queried_tokens=_first_total(metrics, CACHE_QUERIES),
        cache_hit_tokens=_first_total(metrics, CACHE_HITS),
        finished=series.by_label(metrics, FINISHED, "finished_reason"),
    )
