"""Per-request figures (issue 27): energy per request, tokens per joule, energy-delay product, and
the acceptance histograms, over requests and over verify steps. Pure functions, no UI.

Definitions (collectors/docs/figures.md): a request's **energy** is its attributed joules (the
meter's energy split by tokens, attribution.py); **tokens per joule** = committed tokens / those
joules (= 1000 / mJ per token); **energy-delay product** = the request's joules × its end-to-end
latency (send to last token) in seconds, J·s, lower is better on both counts.

Pitfalls handled: a request without the server's drafted/accepted counts has no acceptance and is
left out of the histogram over requests, counted apart (`no_counts`), never read as 0 %; the
distribution of accepted tokens per step comes from the server's per-position counters where it
has them (exact), else from one request's stream bursts (each burst after the first is one step's
own token plus what it accepted; bursts split and merge under load, so that one is marked).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ACCEPTANCE_BINS = 10  # 0-10 %, ..., 90-100 % (100 % falls in the last)


@dataclass(frozen=True, slots=True)
class RequestEnergy:
    """One request's energy figures, units in the names."""

    energy_j: float
    committed_tokens: int
    e2e_s: float

    @property
    def tokens_per_j(self) -> float | None:
        return self.committed_tokens / self.energy_j if self.energy_j > 0 else None

    @property
    def edp_js(self) -> float:
        """Energy-delay product: joules × end-to-end seconds."""
        return self.energy_j * self.e2e_s


def request_energy(
    energy_j: float | None, committed_tokens: int | None, e2e_s: float
) -> RequestEnergy | None:
    """A request's energy figures; None when its joules or tokens are not known."""
    if energy_j is None or not committed_tokens or e2e_s < 0:
        return None
    return RequestEnergy(energy_j, committed_tokens, e2e_s)


@dataclass(frozen=True, slots=True)
class AcceptanceHistogram:
    """Requests per acceptance bin (`ACCEPTANCE_BINS` equal bins of 0-100 %)."""

    counts: tuple[int, ...]
    no_counts: int  # requests without the server's drafted/accepted counts, or that drafted nothing

    @property
    def requests(self) -> int:
        return sum(self.counts)

    def labels(self) -> list[str]:
        width = 100 // len(self.counts)
        return [f"{i * width}-{(i + 1) * width} %" for i in range(len(self.counts))]


def acceptance_histogram(
    acceptances: Iterable[float | None], bins: int = ACCEPTANCE_BINS
) -> AcceptanceHistogram:
    """The distribution of per-request acceptance (accepted / drafted) over `bins` equal bins."""
    counts = [0] * bins
    missing = 0
    for a in acceptances:
        if a is None:
            missing += 1
            continue
        counts[min(bins - 1, max(0, int(a * bins)))] += 1
    return AcceptanceHistogram(tuple(counts), missing)


def accepted_per_step_from_survival(survival: Sequence[float]) -> list[float]:
    """Share of verify steps that accepted exactly j draft tokens, j = 0..K, from S_1..S_K.

    S_j = Pr(accepted ≥ j) (S_0 = 1), so Pr(accepted = j) = S_j − S_{j+1}; the shares sum to 1.
    """
    reach = [1.0, *survival, 0.0]
    return [max(0.0, reach[j] - reach[j + 1]) for j in range(len(survival) + 1)]


def accepted_per_step_from_bursts(burst_sizes: Sequence[int]) -> list[int]:
    """Steps that accepted j draft tokens, j = 0..max, from one request's stream bursts.

    The first burst is prefill's token; each later one is a step's own token plus its accepted ones.
    """
    accepted = [max(0, size - 1) for size in burst_sizes[1:]]
    counts = [0] * (max(accepted) + 1 if accepted else 0)
    for a in accepted:
        counts[a] += 1
    return counts


def summed_survival(windows: Iterable[tuple[Sequence[int], int | None]]) -> tuple[float, ...]:
    """S_j over several poll windows: their per-position accepted counts over their steps, summed
    before dividing (a ratio of sums, never a mean of the windows' ratios)."""
    positions: list[int] = []
    steps = 0
    for per_position, window_steps in windows:
        if not per_position or not window_steps:
            continue
        positions.extend([0] * (len(per_position) - len(positions)))
        for j, count in enumerate(per_position):
            positions[j] += count
        steps += window_steps
    return tuple(count / steps for count in positions) if steps else ()
