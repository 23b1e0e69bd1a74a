"""A server's latency counters before and after a window, worked by hand for the tests that show them.

Before: TTFT buckets (≤0.1 s, ≤0.2 s, +Inf) at 1, 1, 1; 1,000 prompt tokens looked up in the prefix
cache, 100 found; 2 requests stopped, 1 hit its length. After: 4 more at ≤0.1 s and 6 in
(0.1, 0.2], 400 more tokens looked up with 200 found, 4 more stopped. Over the window:
- TTFT p50: rank 5 of 10 falls in (0.1, 0.2] (cumulative 4, 10): 100 + 100 · (5 − 4)/6 = 116.7 ms;
  p95: rank 9.5: 100 + 100 · 5.5/6 = 191.7 ms; p99: rank 9.9: 100 + 100 · 5.9/6 = 198.3 ms;
  mean: sum grew by 1.5 s over 10 observations: 150 ms;
- prefix-cache hit ratio 200/400 = 50 %; finished: stop 4 (length did not move).
"""

from __future__ import annotations

import math

from collectors.servers.histograms import Histogram
from collectors.servers.latency import LatencyCounters

BOUNDS = (0.1, 0.2, math.inf)
BEFORE = LatencyCounters(
    histograms={"ttft": Histogram(BOUNDS, (1, 1, 1), 0.05)},
    cache_queried_tokens=1000,
    cache_hit_tokens=100,
    finished={"stop": 2, "length": 1},
)
AFTER = LatencyCounters(
    histograms={"ttft": Histogram(BOUNDS, (5, 11, 11), 1.55)},
    cache_queried_tokens=1400,
    cache_hit_tokens=300,
    finished={"stop": 6, "length": 1},
)
TTFT_MS = {"0.5": 100 + 100 / 6, "0.95": 100 + 100 * 5.5 / 6, "0.99": 100 + 100 * 5.9 / 6}
