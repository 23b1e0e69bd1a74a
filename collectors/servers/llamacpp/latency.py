"""llama-server's equivalents of the engines' latency figures: the prompt cache only.

llama-server's /metrics (with --metrics; captured from this build in
tests/data/llama-server/*.metrics.*.txt) exports no latency histogram: no TTFT, inter-token,
end-to-end or queue-time distribution, only the lifetime `llamacpp:prompt_seconds_total` and
`llamacpp:tokens_predicted_seconds_total` (means, not tails) and per-response `timings`. What it
does have is the prompt cache: `llamacpp:prompt_tokens_total` counts prompt tokens processed
*excluding* cached ones and `llamacpp:prompt_tokens_cached_total` those reused from the cache, so
the tokens looked up are their sum and the hit ratio over a window is Δcached / (Δprocessed +
Δcached). Its finish reasons are per response only (`stop_type`), never counted on the page.

Pitfalls handled: both counters move only when a request finishes, like every llama-server
counter, so a window's ratio is over the requests that finished in it; a page without them (an
older build) gives no counters (None), not a 0 % hit ratio.
"""

from __future__ import annotations

from collections.abc import Mapping

from collectors import promtext
from collectors.servers.latency import LatencyCounters

PROCESSED = "llamacpp:prompt_tokens_total"
CACHED = "llamacpp:prompt_tokens_cached_total"


def read(metrics: Mapping[str, list[promtext.Sample]] | None) -> LatencyCounters | None:
    """The prompt-cache counters, with no latency histogram; None when the page lacks them."""
    processed = promtext.scalar(metrics or {}, PROCESSED)
    cached = promtext.scalar(metrics or {}, CACHED)
    if processed is None or cached is None:
        return None
    return LatencyCounters(cache_queried_tokens=processed + cached, cache_hit_tokens=cached)
