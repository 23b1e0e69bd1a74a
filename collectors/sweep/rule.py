"""The one rule that turns a sweep's energy ratios into a crossover and a recommendation.

A batch's draft/plain energy ratio is classified once (`classify`): above 1 + EVEN_BAND drafting
costs energy, below 1 - EVEN_BAND it saves, in between it breaks even, and break-even counts as
worth drafting, since drafting then still buys speed (note 25 at one request, collectors/docs/note25.md:
1.03x the energy at 1.26x the speed). The recommendation and the crossover are read from that one
classification (`judge`), so they cannot contradict each other. Pitfall handled: a crossover
found at exactly 1.0 beside a recommendation read with the band (ratios 0.8, 1.02, 1.04 once
printed "crossover ≈ 1.88" beside "keep it on"). The crossover exists only where the
recommendation says "draft at ≤ X, turn it off from Y": it lies between X and Y, where the ratio
leaves the band upward, interpolated linearly in log B, the same line `at_batch` reads the live
verdict's curves on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

# Ratios within 5 % of 1 break even: note 25's pass spreads reach 8 %, so a smaller difference is
# not a measured difference.
EVEN_BAND = 0.05


def interpolate(points: Iterable[tuple[float, float]], x: float) -> float | None:
    """Linear between (x, y) points, clamped at the ends (numpy.interp); None without points."""
    ordered = sorted(points)
    if not ordered:
        return None
    return float(np.interp(x, [p[0] for p in ordered], [p[1] for p in ordered]))


def at_batch(points: Iterable[tuple[float, float]], batch: float) -> float | None:
    """A per-batch figure between measured batches: linear in log B, clamped at the ends."""
    return interpolate([(math.log(b), v) for b, v in points], math.log(batch))


class Verdict(str, Enum):
    """The rule's reading of an energy ratio; its value is the word saved in summaries (and equal to it)."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    SAVES = "saves"
    EVEN = "even"
    COSTS = "costs"


def classify(ratio: float, even_band: float = EVEN_BAND) -> Verdict:
    """The one reading of an energy ratio that everything else uses."""
    if ratio > 1.0 + even_band:
        return Verdict.COSTS
    if ratio < 1.0 - even_band:
        return Verdict.SAVES
    return Verdict.EVEN


@dataclass(frozen=True, slots=True)
class Judgement:
    """The recommendation and the crossover it implies (None where the ratio never leaves the band
    upward between a batch worth drafting and the next one that costs)."""

    recommendation: str
    crossover: dict[str, Any] | None


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def _crossing(below: tuple[int, float], above: tuple[int, float], limit: float) -> dict[str, Any]:
    (b0, r0), (b1, r1) = below, above
    # the same line as at_batch, read the other way: log B against the ratio
    log_at = interpolate([(r0, math.log(b0)), (r1, math.log(b1))], limit)
    assert log_at is not None  # two points always interpolate
    return {"below": b0, "above": b1, "batch": round(math.exp(log_at), 2), "ratio": limit}


def upward_exits(ratios: Sequence[tuple[int, float]], even_band: float = EVEN_BAND) -> list[dict[str, Any]]:
    """Every place the ratio leaves the band upward between two neighbouring measured batches.

    The crossover is the one exit of a clean table; a sweep refines around a lone exit even when a
    noisy batch elsewhere leaves the table without a clean crossover.
    """
    ordered = sorted(ratios)
    return [
        _crossing((b0, r0), (b1, r1), 1.0 + even_band)
        for (b0, r0), (b1, r1) in zip(ordered, ordered[1:])
        if classify(r0, even_band) is not Verdict.COSTS and classify(r1, even_band) is Verdict.COSTS
    ]


def judge(ratios: Sequence[tuple[int, float]], even_band: float = EVEN_BAND) -> Judgement:
    """One line a person can act on, and the crossover batch when there is a clean one."""
    if not ratios:
        return Judgement("no valid paired points: nothing to recommend", None)
    ordered = sorted(ratios)
    verdicts = [(b, classify(r, even_band)) for b, r in ordered]
    worth = [b for b, v in verdicts if v is not Verdict.COSTS]
    costs = [b for b, v in verdicts if v is Verdict.COSTS]
    span = f"{ordered[0][0]}–{ordered[-1][0]}" if len(ordered) > 1 else f"{ordered[0][0]}"
    if not costs:
        verb = (
            "saves energy" if all(v is Verdict.SAVES for _, v in verdicts) else "saves energy or breaks even"
        )
        return Judgement(
            f"drafting {verb} at every measured batch ({span} concurrent requests): keep it on", None
        )
    if not worth:
        return Judgement(
            f"drafting costs energy at every measured batch ({span} concurrent requests): turn it off", None
        )
    if max(worth) < min(costs):
        (cross,) = upward_exits(ordered, even_band)  # all worth, then all cost: exactly one exit
        return Judgement(f"draft at ≤ {_requests(cross['below'])}, turn it off from {cross['above']}", cross)
    if max(costs) < min(worth):
        return Judgement(
            f"drafting costs energy up to {_requests(max(costs))} and pays from {min(worth)}", None
        )
    return Judgement(
        f"drafting pays at {', '.join(map(str, worth))} and costs at {', '.join(map(str, costs))} "
        "concurrent requests: no clean crossover, re-run with more passes",
        None,
    )
