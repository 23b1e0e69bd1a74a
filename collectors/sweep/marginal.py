"""Marginal-width advice: does drafting one (or a few) more tokens per round pay for itself?

The review's Eq. 5 (collectors/docs/energy-ledger.md, seed 003): a round of drafting k tokens costs J_k and
commits G_k tokens on average (G_k = 1 + S_1 + ... + S_k, S_j the probability that the drafted
prefix survives through position j). Widening to k + 1 adds ΔJ to the round and S_{k+1} to its
advance, so energy per token falls only if ΔJ / J_k < S_{k+1} / G_k. Widening k → k' by several
positions is the same comparison with ΔG = G_{k'} - G_k in place of S_{k+1}.

Pitfalls handled: from a sweep, J_k is energy per round, not per token (mJ/token × G_k), so a
width that looks dear per round can still pay when it commits more per round; a length with
unknown G or energy gives no advice rather than a guess; survival is a probability, so a value
outside [0, 1] or an advance below 1 (a round always commits the target's own token) is refused.
Live (`live_width_advice`), J_k comes from the sweep and S_j from the server's window: a length
beyond the positions the server drafted gets no advice, since survival there was never observed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from collectors.energy import ledger
from collectors.errors import SpectopError


def expected_advance(survival: Sequence[float]) -> float:
    """G_k = 1 + Σ S_j over the k drafted positions (the review's Eq. 1), survival checked first."""
    if any(not (0.0 <= s <= 1.0) for s in survival):
        raise SpectopError(f"survival probabilities must lie in [0, 1], not {list(survival)}", "")
    return ledger.expected_advance(survival)


def geometric_survival(p: float, k: int) -> list[float]:
    """S_1..S_k for a constant conditional acceptance p (the review's teaching model): S_j = p^j."""
    return [p**j for j in range(1, k + 1)]


def widening_threshold(added_advance: float, advance: float) -> float:
    """The largest fractional rise in round energy that widening may cost: ΔG / G_k (Eq. 5)."""
    if advance < 1.0:
        raise SpectopError(f"a round commits at least one token, not G = {advance}", "")
    return ledger.marginal_width_threshold(added_advance, advance)


def widening_pays(energy_rise: float, added_advance: float, advance: float) -> bool:
    """Eq. 5: widening pays only if ΔJ / J_k < ΔG / G_k."""
    widening_threshold(added_advance, advance)  # refuses an advance below 1
    return ledger.marginal_width_pays(energy_rise, added_advance, advance)


@dataclass(frozen=True, slots=True)
class WidthStep:
    """Widening the draft from `narrow` to `wide` tokens, as a draft-length sweep measured it."""

    narrow: int
    wide: int
    energy_rise: float  # ΔJ / J_narrow: the fractional extra energy of one round
    added_advance: float  # G_wide - G_narrow: tokens the wider round commits in addition
    threshold: float  # ΔG / G_narrow: the rise it may cost and still pay
    pays: bool

    @property
    def keep(self) -> int:
        """The draft length to keep: the wider one only where widening pays."""
        return self.wide if self.pays else self.narrow

    @property
    def sentence(self) -> str:
        verb = "costs" if self.energy_rise >= 0 else "saves"
        keep = self.keep
        return (
            f"draft-max {self.narrow} → {self.wide} {verb} {abs(self.energy_rise) * 100:.0f} % "
            f"{'more' if self.energy_rise >= 0 else 'less'} per round and adds "
            f"{self.added_advance:.2f} tokens: keep {keep}"
        )


def width_step(
    narrow: int, wide: int, narrow_point: tuple[float, float], wide_point: tuple[float, float]
) -> WidthStep:
    """The step from draft length `narrow` to `wide`, each given as (mJ per token, G)."""
    (mj_narrow, g_narrow), (mj_wide, g_wide) = narrow_point, wide_point
    if min(mj_narrow, mj_wide) <= 0:
        raise SpectopError("energy per token must be positive to compare draft lengths", "")
    round_narrow, round_wide = mj_narrow * g_narrow, mj_wide * g_wide  # J_k = mJ/token × G_k
    rise = round_wide / round_narrow - 1.0
    added = g_wide - g_narrow
    threshold = widening_threshold(added, g_narrow)
    return WidthStep(narrow, wide, rise, added, threshold, rise < threshold)


def width_advice(points: Mapping[int, tuple[float | None, float | None]]) -> list[WidthStep]:
    """Each step between neighbouring measured draft lengths; `points` maps a length to (mJ/token, G).

    A length whose energy or advance is unknown is left out, so no step is built on a guess.
    """
    known: list[tuple[int, tuple[float, float]]] = sorted(
        (k, (mj, g)) for k, (mj, g) in points.items() if mj is not None and g is not None and mj > 0
    )
    return [width_step(a, b, pa, pb) for (a, pa), (b, pb) in zip(known, known[1:])]


def live_width_advice(round_energy_mj: Mapping[int, float], survival: Sequence[float]) -> list[WidthStep]:
    """Eq. 5 live: the sweep's energy per round J_k for each measured draft length, and the server's
    survival S_j now (its traffic, not the sweep's prompts). Each step between neighbouring lengths
    that the live drafts reach (k' ≤ the positions the server reports) is advised; a longer length is
    left out, as the server has not drafted that far and its S_j there is unknown, not zero.
    """
    lengths = sorted(k for k, j in round_energy_mj.items() if j > 0 and 0 < k <= len(survival))
    steps = []
    for narrow, wide in zip(lengths, lengths[1:]):
        advance = expected_advance(survival[:narrow])
        added = math.fsum(survival[narrow:wide])
        rise = round_energy_mj[wide] / round_energy_mj[narrow] - 1.0
        threshold = widening_threshold(added, advance)
        steps.append(WidthStep(narrow, wide, rise, added, threshold, rise < threshold))
    return steps
