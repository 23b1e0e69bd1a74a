"""One arm at one batch (and prompt class): its points' figures as ratios of totals.

Every figure is a ratio of totals over the points (Eq. 3, 14): joules, tokens and seconds are
summed over passes (and plain before/after) before dividing. Pitfalls handled: energy the meter
did not cover is a lower bound: it never becomes W, mJ/token or a ratio, only "at least". W
divides by the seconds the energy was measured over (`energy_window_s`), not by the request
window. Latency tails are percentiles of all the points' samples pooled, not a median or a maximum
of per-point percentiles; rows saved without their samples leave the gap tails blank. Counts a
server did not report stay unknown, never 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from collectors.energy import ledger
from collectors.sweep.point import SweepPoint
from collectors.sweep.records import ArmFigures


def _sum(values: Sequence[float | None]) -> float | None:
    """The total of the points' counts, or None when a point lacks its count."""
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None))


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def _pooled(samples: list[float] | None, q: float) -> float | None:
    import numpy as np  # here: numpy is the dashboard's slowest import, and its first frame needs none

    return float(np.percentile(samples, q)) if samples else None


def _gaps(rows: Sequence[SweepPoint]) -> list[float] | None:
    """Every chunk gap of the points, or None when a point did not keep its samples (older runs)."""
    if any(r.chunk_gaps_ms is None for r in rows):
        return None
    return [g for r in rows for g in r.chunk_gaps_ms or ()]


def aggregate(rows: Sequence[SweepPoint], trusted: bool = True) -> ArmFigures:
    """One arm at one batch, over `rows`; `trusted` says whether they are trustworthy points only."""
    measured_j = _sum([r.energy.energy_j for r in rows])
    covered = all(r.energy.energy_covered for r in rows)
    energy_j = measured_j if covered else None  # a lower bound is not a value
    at_least_j = measured_j if not covered else None
    net_j = _sum([r.energy.net_energy_j for r in rows]) if covered else None
    tokens = _sum([r.window.committed_tokens for r in rows]) or 0.0
    duration_s = _sum([r.window.window_s for r in rows]) or 0.0
    # the seconds the meter measured over (rows saved before this was recorded: the request window)
    energy_s = sum(r.metered_s for r in rows)
    # unknown counts (a point whose drafting the server did not report) stay unknown, never 0
    drafted = _sum([r.window.drafted for r in rows])
    accepted = _sum([r.window.accepted for r in rows])
    steps = _sum([r.window.steps for r in rows])
    gaps = _gaps(rows)
    return ArmFigures(
        points=len(rows),
        trusted=trusted and bool(rows),
        committed_tokens=int(tokens),
        duration_s=duration_s,
        energy_window_s=energy_s,
        energy_j=energy_j,
        energy_j_at_least=at_least_j,
        tok_s=tokens / duration_s if duration_s else None,
        power_w=energy_j / energy_s if energy_j is not None and energy_s else None,
        power_w_at_least=at_least_j / energy_s if at_least_j is not None and energy_s else None,
        mj_per_token=_mj(energy_j, tokens),
        mj_per_token_at_least=_mj(at_least_j, tokens),
        net_mj_per_token=_mj(net_j, tokens),
        acceptance=_known(ledger.acceptance, drafted, accepted),
        mean_advance=_known(ledger.mean_committed_advance, accepted, steps),
        verified_width=_known(ledger.mean_verified_width, drafted, steps),
        concurrency_mean=_median(r.window.concurrency_mean for r in rows),
        ttft_ms_p50=_pooled(
            [q.ttft_ms for r in rows for q in r.window.requests if q.ttft_ms is not None], 50
        ),
        chunk_gap_ms_p95=_pooled(gaps, 95),
        chunk_gap_ms_p99=_pooled(gaps, 99),
        flags=tuple(sorted({c for r in rows for c in r.codes})),
    )


def arm_figures(rows: Sequence[SweepPoint], excluded: Sequence[tuple[str, ...]]) -> ArmFigures:
    """The arm's trustworthy points when it has any; else all of them, marked untrusted."""
    kept = [r for r, codes in zip(rows, excluded) if not codes]
    return aggregate(kept) if kept else aggregate(rows, trusted=False)


def _mj(energy_j: float | None, tokens: float) -> float | None:
    return ledger.mj_per_token(energy_j, int(tokens)) if energy_j is not None else None


def _known(ratio: Callable[[int, int], float | None], a: float | None, b: float | None) -> float | None:
    """A ledger ratio of two summed counts, or None when either count is unknown."""
    return None if a is None or b is None else ratio(int(a), int(b))
