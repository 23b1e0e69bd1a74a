"""The open-loop half of a paired sweep's summary: a row per offered rate, and its crossover.

A rate's row is built as a batch's is (summary.py: the same figures, trust and ratios), plus the
requests each arm had in flight, pooled over the points its figures come from (open_loop.py).
The crossover and the recommendation are the one rule's (rule.judge), read on plain's achieved mean
concurrency rather than on the rate: that is the load the traffic puts on a server that does not
draft, comparable with a closed-loop batch; drafting changes how long requests take, so how many
are in flight at the same rate, and its figure is shown beside plain's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from collectors.sweep import checks
from collectors.sweep.open_loop import pooled
from collectors.sweep.point import InFlight, SweepPoint
from collectors.sweep.records import BatchPair, OpenLoopSummary, RatePair, RateUntrusted
from collectors.sweep.rule import judge

PairOf = Callable[[int, Sequence[SweepPoint], Sequence[tuple[str, ...]]], BatchPair]


def open_loop_of(
    rows: Sequence[SweepPoint], excluded: Sequence[tuple[str, ...]], pair_of: PairOf
) -> OpenLoopSummary | None:
    """The open-loop rows of `rows` (those with a `load`), each rate's pair made by `pair_of`."""
    by_rate: dict[float, list[int]] = {}
    for i, row in enumerate(rows):
        if row.load is not None:
            by_rate.setdefault(row.load.rate_rps, []).append(i)
    if not by_rate:
        return None
    table = []
    for rate, indexes in sorted(by_rate.items()):
        mine, codes = [rows[i] for i in indexes], [excluded[i] for i in indexes]
        pair = pair_of(0, mine, codes)
        table.append(
            RatePair(
                rate_rps=rate,
                arrivals=next(r.load.arrivals for r in mine if r.load),
                plain=pair.plain,
                draft=pair.draft,
                plain_in_flight=_in_flight(mine, codes, "plain"),
                draft_in_flight=_in_flight(mine, codes, "draft"),
                speedup=pair.speedup,
                energy_ratio=pair.energy_ratio,
                net_energy_ratio=pair.net_energy_ratio,
                power_ratio=pair.power_ratio,
                void=pair.void,
                trusted=pair.trusted,
                verdict=pair.verdict,
                excluded_points=pair.excluded_points,
                excluded=pair.excluded,
                untrusted_because=pair.untrusted_because,
            )
        )
    # on plain's achieved mean concurrency, to two decimals (the recommendation prints them)
    ratios = [
        (_two_places(t.plain_in_flight.mean), t.energy_ratio)
        for t in table
        if t.trusted and t.energy_ratio is not None and t.plain_in_flight and t.plain_in_flight.mean
    ]
    verdict = judge(ratios)  # type: ignore[arg-type]  # the rule reads any positive concurrency
    return OpenLoopSummary(
        arrivals=", ".join(dict.fromkeys(t.arrivals for t in table)),
        rows=tuple(table),
        crossover=verdict.crossover,
        recommendation=verdict.recommendation.replace("measured batch", "measured rate"),
        untrusted=tuple(RateUntrusted(t.rate_rps, t.untrusted_because) for t in table if not t.trusted),
    )


def _in_flight(rows: Sequence[SweepPoint], excluded: Sequence[tuple[str, ...]], arm: str) -> InFlight | None:
    """The arm's requests in flight over the points its figures come from: its trustworthy ones
    when it has any, else all (summary.py's `arm_figures`)."""
    points = [(r, c) for r, c in zip(rows, excluded) if r.arm == arm]
    kept = [r for r, c in points if not checks.for_speed(c)] or [r for r, _ in points]
    return pooled(r.in_flight for r in kept)


def _two_places(value: float) -> float | int:
    """The concurrency as the recommendation prints it: 2.37, or 2 rather than 2.0."""
    rounded = round(value, 2)
    return int(rounded) if rounded.is_integer() else rounded
