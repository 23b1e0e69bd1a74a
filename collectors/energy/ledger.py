"""The energy ledger: the accounting of collectors/docs/energy-ledger.md as pure functions.

Equation numbers are the review's of "Only Accepted Tokens Count" (collectors/docs/energy-ledger.md); the
worked figures of note 25 are in collectors/docs/note25.md. Every ratio is a ratio of totals: joules are
summed before dividing (Eq. 3, 14).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def energy_at_j(times_s: Sequence[float], energies_j: Sequence[float], t_s: float) -> float | None:
    """Cumulative energy at `t_s`, linearly interpolated between samples; None outside coverage."""
    if not times_s or t_s < times_s[0] or t_s > times_s[-1]:
        return None
    i = bisect.bisect_left(times_s, t_s)
    if times_s[i] == t_s:
        return energies_j[i]
    t_a, t_b = times_s[i - 1], times_s[i]
    e_a, e_b = energies_j[i - 1], energies_j[i]
    return e_a + (e_b - e_a) * (t_s - t_a) / (t_b - t_a)


def window_energy_j(
    times_s: Sequence[float], energies_j: Sequence[float], t0_s: float, t1_s: float
) -> float | None:
    """Energy of [t0, t1] from a cumulative counter, boundaries interpolated; None if not covered.

    Never extrapolates: a window that ends after the last sample has no answer yet.
    """
    e0 = energy_at_j(times_s, energies_j, t0_s)
    e1 = energy_at_j(times_s, energies_j, t1_s)
    if e0 is None or e1 is None:
        return None
    return e1 - e0


def mj_per_token(energy_j: float, committed_tokens: int) -> float | None:
    """Window joules over committed tokens, in mJ (Eq. 3); None when nothing was committed."""
    if committed_tokens <= 0:
        return None
    return 1000.0 * energy_j / committed_tokens


def net_energy_j(gross_j: float, idle_power_w: float, duration_s: float) -> float:
    """Energy above the measured idle baseline; may be negative, which is noise, not clamped."""
    return gross_j - idle_power_w * duration_s


def draft_over_plain(draft: float | None, plain: float | None) -> float | None:
    """A drafting arm's figure over plain's at equal batch: the energy ratio e_s/e_0 (of mJ/token),
    the speed-up U (of tok/s) or the power ratio (of W), so that e_s/e_0 = (P_s/P_0) / U (Eq. 6).
    Each figure is already a ratio of its arm's totals; None when either is unknown or plain's is 0."""
    return draft / plain if draft is not None and plain else None


def acceptance(drafted: int, accepted: int) -> float | None:
    """Accepted over drafted tokens; None when nothing was drafted."""
    return accepted / drafted if drafted > 0 else None


def mean_committed_advance(accepted: int, steps: int) -> float | None:
    """G = 1 + accepted/steps: tokens committed per verify step (the target's own token plus accepted)."""
    return 1.0 + accepted / steps if steps > 0 else None


def mean_verified_width(drafted: int, steps: int) -> float | None:
    """Mean rows the target verifies per step: v = k + 1, averaged over steps."""
    return 1.0 + drafted / steps if steps > 0 else None


def survival_from_positions(accepted_per_position: Sequence[int], steps: int) -> list[float]:
    """S_j = Pr(A ≥ j), from per-position accepted counts (position 0 is S_1)."""
    if steps <= 0:
        return []
    return [count / steps for count in accepted_per_position]


def expected_advance(survival: Iterable[float]) -> float:
    """Eq. 1: E[G] = 1 + Σ_j S_j."""
    return 1.0 + math.fsum(survival)


def marginal_width_threshold(next_survival: float, advance_k: float) -> float:
    """Eq. 5: the (k+1)-th position pays iff ΔJ/J_k < S_{k+1}/G_k; returns that right-hand side."""
    return next_survival / advance_k


def marginal_width_pays(round_energy_increase: float, next_survival: float, advance_k: float) -> bool:
    """Eq. 5 with ΔJ/J_k given as a fraction (0.02 = 2 % more energy per round)."""
    return round_energy_increase < marginal_width_threshold(next_survival, advance_k)


@dataclass(frozen=True, slots=True)
class RequestActivity:
    """When a request ran and when it committed tokens, on the meter's monotonic clock."""

    request_id: str
    t_start_s: float
    t_end_s: float
    token_times_s: tuple[tuple[float, float], ...]  # (arrival time, tokens committed then)
    # True: the times are not when tokens came but a pacing (a log's totals, a poll's count), so each
    # event's tokens are spread evenly over the time since the one before (the first's since the start)
    spread: bool = False


def attribute_energy_j(
    meter_times_s: Sequence[float],
    meter_energies_j: Sequence[float],
    requests: Sequence[RequestActivity],
    unseen_shares: Sequence[tuple[float, float, float]] = (),
) -> tuple[dict[str, float], float]:
    """Split the meter's joules over the requests active when they were spent.

    Power is taken as constant within a meter interval (all two counter reads can say), so an
    interval's joules are prorated by time to its parts between request starts and ends. Each part
    goes to the requests active in all of it, by the tokens each committed in it, equally when none
    committed (prefill); a part with no active request stays unattributed. A `spread` request's
    events are cuts too, so its token rate is constant within a part and its share is the exact
    ∫ P·rate/Σrate, whatever the meter's rate (lumps split interval by interval read 2158 mJ/token
    at 5 Hz and 3411 at 10). `unseen_shares` are (start, end, share) of windows in which traffic
    the requests are not among took that share of the joules (collectors/energy/unseen.py); it is
    taken off each part in them first. Returns (joules per request, unattributed joules, the unseen
    traffic's among them); the two add up to
    the energy of the meter span. Meter times must increase; an interval of zero length (a repeated
    time) stays unattributed.
    """
    per_request = {r.request_id: 0.0 for r in requests}
    unattributed = 0.0
    edges = sorted(
        {t for r in requests for t in (r.t_start_s, r.t_end_s)}
        | {t for r in requests if r.spread for t, _ in r.token_times_s if r.t_start_s < t < r.t_end_s}
        | {t for w in unseen_shares for t in w[:2]}
    )
    windows = sorted(unseen_shares)
    window_starts = [w[0] for w in windows]
    by_start = sorted(requests, key=lambda r: r.t_start_s)
    token_index = {r.request_id: TokenCurve(r) for r in requests}
    active: dict[str, RequestActivity] = {}
    next_start = 0
    for i in range(1, len(meter_times_s)):
        t_a, t_b = meter_times_s[i - 1], meter_times_s[i]
        interval_j = meter_energies_j[i] - meter_energies_j[i - 1]
        if t_b <= t_a:
            unattributed += interval_j
            continue
        power_w = interval_j / (t_b - t_a)
        cuts = [t_a, *edges[bisect.bisect_right(edges, t_a) : bisect.bisect_left(edges, t_b)], t_b]
        for u, v in zip(cuts, cuts[1:]):
            # every start and end is a cut, so a request is active in all of a part or in none
            while next_start < len(by_start) and by_start[next_start].t_start_s <= u:
                r = by_start[next_start]
                active[r.request_id] = r
                next_start += 1
            for gone in [k for k, r in active.items() if r.t_end_s <= u]:
                del active[gone]
            part_j = power_w * (v - u)
            if not active:
                unattributed += part_j
                continue
            w = (
                bisect.bisect_right(window_starts, u) - 1
            )  # windows are cuts: one holds all of the part or none
            if w >= 0 and v <= windows[w][1]:
                unattributed += part_j * windows[w][2]
                part_j *= 1.0 - windows[w][2]
            tokens = {k: token_index[k].between(u, v) for k in active}
            total_tokens = sum(tokens.values())
            for k in active:
                share = tokens[k] / total_tokens if total_tokens else 1.0 / len(active)
                per_request[k] += part_j * share
    return per_request, unattributed


def every_step_count(committed_tokens: int, accepted: int, requests: int) -> int:
    """Decode steps of finished requests, every step counted (Eq. 4's steps): T − R − A.

    Each request's first token comes from prefill; every later step commits its own token plus
    the drafts it accepted, so the steps are the tokens after the first less the accepted ones.
    Test: 539 tokens of 8 requests with 143 accepted took 388 steps, though only 111 drafted.
    """
    return committed_tokens - requests - accepted


class TokenCurve:
    """A request's committed tokens by time, for counting those in (u, v] by bisection.

    A spread request's count is its cumulative curve, linear between events, read at v less at u.
    """

    def __init__(self, request: RequestActivity) -> None:
        ordered = sorted(request.token_times_s)
        self.times_s = [t for t, _ in ordered]
        self.cumulative = [0.0]
        for _, n in ordered:
            self.cumulative.append(self.cumulative[-1] + n)
        self.t_start_s = request.t_start_s
        self.spread = request.spread

    def between(self, u_s: float, v_s: float) -> float:
        if self.spread:
            return self._curve(v_s) - self._curve(u_s)
        hi = bisect.bisect_right(self.times_s, v_s)
        lo = bisect.bisect_right(self.times_s, u_s)
        return self.cumulative[hi] - self.cumulative[lo]

    def _curve(self, t_s: float) -> float:
        """Tokens committed by `t_s`, each event's spread over the gap before it (a lump where none)."""
        i = bisect.bisect_right(self.times_s, t_s)  # events at or before t_s
        if i == len(self.times_s):
            return self.cumulative[i]
        gap_start_s = max(self.times_s[i - 1] if i else self.t_start_s, self.t_start_s)
        if t_s <= gap_start_s:
            return self.cumulative[i]
        fraction = (t_s - gap_start_s) / (self.times_s[i] - gap_start_s)
        return self.cumulative[i] + fraction * (self.cumulative[i + 1] - self.cumulative[i])
