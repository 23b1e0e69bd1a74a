"""The one rule that turns a sweep's energy ratios into a crossover and a recommendation.

A batch's draft/plain energy ratio is classified once (`classify`): above 1 + EVEN_BAND drafting
costs energy, below 1 - EVEN_BAND it saves, in between it breaks even, and break-even counts as
worth drafting, since drafting then still buys speed (note 25 at one request, collectors/docs/note25.md:
1.03x the energy at 1.26x the speed). The recommendation and the crossover are read from that one
classification (`judge`), so they cannot contradict each other. Pitfall handled: a crossover
found at exactly 1.0 beside a recommendation read with the band (ratios 0.8, 1.02, 1.04 once
printed "crossover ≈ 1.88" beside "keep it on"). The crossover exists only where the
recommendation says "draft at ≤ X, turn it off from Y". It is reported where drafting starts
costing energy, the ratio rising through 1.0 (not through the band's top: that put it at 2.48
where the ratio crossed 1.0 at 1.97), with the band as an interval around it: where the ratio
rises through 1 - EVEN_BAND and 1 + EVEN_BAND (`Crossover`). Every crossing is interpolated
linearly in log B, the same line `at_batch` reads the live verdict's curves on. Without energy
(no meter) the verdict is read from speed alone (`judge_speed`), and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

# Ratios within 5 % of 1 break even: note 25's pass spreads reach 8 %, so a smaller difference is
# not a measured difference.
EVEN_BAND = 0.05


def interpolate(points: Iterable[tuple[float, float]], x: float) -> float | None:
    """Linear between (x, y) points, clamped at the ends (numpy.interp); None without points."""
    ordered = sorted(points)
    if not ordered:
        return None
    import numpy as np  # here, not at the top: the dashboard's first frame does not wait on numpy

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
class Crossover:
    """Where drafting starts costing energy, between the batches the recommendation names.

    Each batch is where the ratio rises through a level for the last time before it leaves the band
    upward, interpolated in log B: `batch_at_1` through 1.0, `band_low` and `band_high` through the
    band's edges (the interval the crossover lies in within the noise). `batch_at_1` and `band_low`
    are None when the ratio is above their level from `lowest_batch`, the smallest batch judged, on:
    they lie at or below it. `band_high` lies between `below` and `above`.
    """

    below: int  # the last batch worth drafting ("draft at ≤ below")
    above: int  # the first that costs ("turn it off from above")
    batch_at_1: float | None
    band_low: float | None
    band_high: float
    lowest_batch: int
    even_band: float = EVEN_BAND

    @staticmethod
    def is_old_form(data: Any) -> bool:
        """A crossover saved by summary/2: one batch, where the ratio rose through the band's top."""
        return isinstance(data, dict) and "band_high" not in data


@dataclass(frozen=True, slots=True)
class Judgement:
    """The recommendation and the crossover it implies (None where the ratio never leaves the band
    upward between a batch worth drafting and the next one that costs)."""

    recommendation: str
    crossover: Crossover | None


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def _through(below: tuple[int, float], above: tuple[int, float], level: float) -> float:
    """The batch where the line from `below` to `above` (log B against the ratio) reaches `level`."""
    (b0, r0), (b1, r1) = below, above
    # the same line as at_batch, read the other way: log B against the ratio
    log_at = interpolate([(r0, math.log(b0)), (r1, math.log(b1))], level)
    assert log_at is not None  # two points always interpolate
    return round(math.exp(log_at), 2)


def _last_rise(ordered: Sequence[tuple[int, float]], start: int, end: int, level: float) -> float | None:
    """Where the ratio rises through `level` for the last time before `ordered[end]` (which is above
    it), looking no further back than `start`; None when it is above `level` from `start` on."""
    for k in range(end - 1, start - 1, -1):
        if ordered[k][1] <= level:
            return _through(ordered[k], ordered[k + 1], level)
    return None


def _crossover(ordered: Sequence[tuple[int, float]], exit_at: int, even_band: float) -> Crossover:
    """The crossover of the exit from the band between `ordered[exit_at]` and the next batch; its
    1.0 crossing and band are looked for among the batches worth drafting just before it."""
    start = exit_at
    while start > 0 and classify(ordered[start - 1][1], even_band) is not Verdict.COSTS:
        start -= 1
    end = exit_at + 1
    high = _last_rise(ordered, exit_at, end, 1.0 + even_band)
    assert high is not None  # the ratio at exit_at is within the band
    return Crossover(
        below=ordered[exit_at][0],
        above=ordered[end][0],
        batch_at_1=_last_rise(ordered, start, end, 1.0),
        band_low=_last_rise(ordered, start, end, 1.0 - even_band),
        band_high=high,
        lowest_batch=ordered[start][0],
        even_band=even_band,
    )


def upward_exits(ratios: Sequence[tuple[int, float]], even_band: float = EVEN_BAND) -> list[Crossover]:
    """Every place the ratio leaves the band upward between two neighbouring measured batches.

    The crossover is the one exit of a clean table; a sweep refines around a lone exit even when a
    noisy batch elsewhere leaves the table without a clean crossover.
    """
    ordered = sorted(ratios)
    return [
        _crossover(ordered, i, even_band)
        for i, ((_, r0), (_, r1)) in enumerate(zip(ordered, ordered[1:]))
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
        return Judgement(f"draft at ≤ {_requests(cross.below)}, turn it off from {cross.above}", cross)
    if max(costs) < min(worth):
        return Judgement(
            f"drafting costs energy up to {_requests(max(costs))} and pays from {min(worth)}", None
        )
    return Judgement(
        f"drafting pays at {', '.join(map(str, worth))} and costs at {', '.join(map(str, costs))} "
        "concurrent requests: no clean crossover, re-run with more passes",
        None,
    )


NO_ENERGY = "energy not measured (no meter)"


def judge_speed(speedups: Sequence[tuple[int, float]], even_band: float = EVEN_BAND) -> str:
    """The speed-only verdict of a sweep without energy: where drafting is faster, as fast (within
    the band) or slower than plain; never an energy recommendation."""
    if not speedups:
        return f"{NO_ENERGY}, and no batch has a trustworthy speed pair: nothing to recommend"
    ordered = sorted(speedups)
    words = {
        Verdict.SAVES: "slower",
        Verdict.EVEN: f"as fast (within {100 * even_band:.0f} %)",
        Verdict.COSTS: "faster",
    }
    # a speed-up reads the other way round from an energy ratio: above the band is better
    groups: dict[str, list[int]] = {}
    for batch, speedup in ordered:
        groups.setdefault(words[classify(speedup, even_band)], []).append(batch)
    if len(groups) == 1:
        (word,) = groups
        span = f"{ordered[0][0]}–{ordered[-1][0]}" if len(ordered) > 1 else f"{ordered[0][0]}"
        where = f"at every measured batch ({span} concurrent requests)"
        return f"{NO_ENERGY}; by speed alone, drafting is {word} {where}: measure energy with a meter to judge it"
    parts = [f"{word} at {', '.join(map(str, bs))}" for word, bs in groups.items()]
    return (
        f"{NO_ENERGY}; by speed alone, drafting is {' and '.join(parts)} concurrent requests: "
        "measure energy with a meter to judge it"
    )
