"""Prometheus histograms read from a server's page, their window deltas and their quantiles.

A server's latency histograms are cumulative since it started: a figure "over the last window"
is the bucket-by-bucket difference of two scrapes, never the lifetime buckets (which a long-lived
server fills with yesterday's traffic). The quantile is Prometheus's own `histogram_quantile`
(promql/quantile.go `BucketQuantile`): find the bucket holding rank q·N and interpolate linearly
inside it, from the previous bucket's upper bound (0 for the first bucket) to its own; a rank in
the +Inf bucket gives the highest finite bound. So a quantile is exact only to the width of the
bucket it falls in, and tests allow that much.

Pitfalls handled: a histogram is summed over label sets (engines, `is_streaming`) bucket by
bucket (`le`), copies named in `dedupe` counted once; two scrapes whose bucket bounds differ (the
server was restarted with other buckets) or whose counts went down (a restart) give no delta, not
a negative one; a histogram not yet on the first page counts from zero; a window with no observation has no quantile (None), not 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from collectors.promtext import Sample
from collectors.servers import series

Samples = Mapping[str, list[Sample]]


@dataclass(frozen=True, slots=True)
class Histogram:
    """Cumulative bucket counts: `counts[i]` observations ≤ `bounds_s[i]`; the last bound is +Inf."""

    bounds_s: tuple[float, ...]
    counts: tuple[float, ...]
    sum_s: float = 0.0

    @property
    def count(self) -> float:
        return self.counts[-1] if self.counts else 0.0

    def quantile(self, q: float) -> float | None:
        """The q-quantile in seconds as Prometheus's histogram_quantile gives it; None when empty."""
        return bucket_quantile(q, self.bounds_s, self.counts)


def read(samples: Samples | None, name: str, dedupe: Iterable[str] = ()) -> Histogram | None:
    """`name`'s histogram summed over label sets; None when the page has no `<name>_bucket` series."""
    per_bound: dict[float, float] = {}
    for key, value in series.series(samples, f"{name}_bucket", dedupe=dedupe).items():
        le = dict(key).get("le")
        try:
            bound = float(le) if le is not None else math.nan
        except ValueError:
            continue
        if not math.isnan(bound):
            per_bound[bound] = per_bound.get(bound, 0.0) + value
    if not per_bound or math.inf not in per_bound:
        return None
    bounds = tuple(sorted(per_bound))
    total = series.total(samples, f"{name}_sum", dedupe=dedupe)
    return Histogram(bounds, tuple(per_bound[b] for b in bounds), total or 0.0)


def delta(before: Histogram | None, after: Histogram | None) -> Histogram | None:
    """The observations made between two reads; None when `after` is missing, the bounds differ or a
    count went down (the server restarted between them). A histogram absent from `before` counts
    from zero: a labelled one (SGLang's TTFT per `is_streaming`) appears with its first observation."""
    if after is None:
        return None
    if before is None:
        return after
    if before.bounds_s != after.bounds_s:
        return None
    counts = tuple(b - a for a, b in zip(before.counts, after.counts, strict=True))
    if any(c < 0 for c in counts):
        return None
    return Histogram(after.bounds_s, counts, after.sum_s - before.sum_s)


def bucket_quantile(q: float, bounds: tuple[float, ...], counts: tuple[float, ...]) -> float | None:
    """Prometheus's BucketQuantile on cumulative `counts` (the last bound +Inf); None when empty."""
    if not counts or counts[-1] <= 0 or not 0.0 <= q <= 1.0:
        return None
    rank = q * counts[-1]
    # the first bucket (the +Inf one excluded) whose cumulative count reaches the rank
    b = next((i for i in range(len(counts) - 1) if counts[i] >= rank), len(counts) - 1)
    if b == len(counts) - 1:
        return bounds[-2] if len(bounds) > 1 else None
    if b == 0 and bounds[0] <= 0:
        return bounds[0]
    start, end, in_bucket = 0.0, bounds[b], counts[b]
    if b > 0:
        start = bounds[b - 1]
        in_bucket -= counts[b - 1]
        rank -= counts[b - 1]
    if in_bucket <= 0:  # q = 0 on an empty first bucket
        return start
    return start + (end - start) * (rank / in_bucket)
