"""A saved sweep's per-request figures for `spectop report DIR`: per arm and batch (and prompt
class), the energy per request, tokens per joule, the mean energy-delay product, and the
acceptance histogram over the requests (collectors/requests/per_request.py has the definitions).

A sweep keeps no meter reading per request, only each point's joules over its window, in which
all its requests ran; so a request's joules are its point's split by committed tokens (they sum
to the point's). Pitfalls handled: the points are those the table uses (the trustworthy ones, else
all of them, marked untrusted); a point the meter did not cover gives a lower bound, so a group
with one has no energy figure; a failed request has no figures and is not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from collectors.energy import ledger
from collectors.requests.per_request import AcceptanceHistogram, acceptance_histogram
from collectors.sweep import checks
from collectors.sweep.point import RequestFigures, SweepPoint


@dataclass(frozen=True, slots=True)
class ArmRequests:
    """One arm's requests at one batch (and class)."""

    prompt_class: str | None
    batch: int
    arm: str
    trusted: bool
    requests: int
    energy_j_per_request: float | None
    tokens_per_j: float | None
    edp_js_mean: float | None
    acceptance: AcceptanceHistogram


def _ok(q: RequestFigures) -> bool:
    return q.error is None and bool(q.committed_tokens)


def request_joules(point: SweepPoint) -> list[tuple[RequestFigures, float | None]]:
    """Each whole request of a point with its share of the point's joules by tokens (None: not measured)."""
    requests = [q for q in point.window.requests if _ok(q)]
    tokens = sum(q.committed_tokens or 0 for q in requests)
    energy_j = point.energy.energy_j if point.energy.energy_covered else None
    if energy_j is None or not tokens:
        return [(q, None) for q in requests]
    return [(q, energy_j * (q.committed_tokens or 0) / tokens) for q in requests]


def arm_requests(prompt_class: str | None, batch: int, arm: str, points: Sequence[SweepPoint]) -> ArmRequests:
    """The group's figures over `points` (already the ones the table uses)."""
    shares = [pair for p in points for pair in request_joules(p)]
    measured = [(q, j) for q, j in shares if j is not None]
    complete = bool(shares) and len(measured) == len(shares)
    total_j = sum(j for _, j in measured)
    tokens = sum(q.committed_tokens or 0 for q, _ in measured)
    edps = [j * (q.committed_tokens or 0) / q.tok_s for q, j in measured if q.tok_s]  # e2e = tokens / tok_s
    return ArmRequests(
        prompt_class=prompt_class,
        batch=batch,
        arm=arm,
        trusted=True,
        requests=len(shares),
        energy_j_per_request=total_j / len(shares) if complete else None,
        tokens_per_j=tokens / total_j if complete and total_j > 0 else None,
        edp_js_mean=sum(edps) / len(edps) if complete and len(edps) == len(shares) else None,
        acceptance=acceptance_histogram(
            ledger.acceptance(q.draft_n, q.draft_n_accepted)
            if q.draft_n and q.draft_n_accepted is not None
            else None
            for q, _ in shares
        ),
    )


def per_request_rows(points: Sequence[SweepPoint]) -> list[ArmRequests]:
    """One row per (class, batch, arm): by class and batch, plain first, the other arms as they ran."""
    excluded = checks.exclusions(points)
    groups: dict[tuple[str | None, int, str], list[tuple[SweepPoint, tuple[str, ...]]]] = {}
    for point, codes in zip(points, excluded):
        groups.setdefault((point.prompt_class, point.batch, point.arm), []).append((point, codes))
    rows = []
    order = sorted(groups, key=lambda k: (k[0] or "", k[1], k[2] != "plain"))
    for key in order:
        block = groups[key]
        kept = [p for p, codes in block if not codes]
        row = arm_requests(*key, kept or [p for p, _ in block])
        rows.append(row if kept else replace(row, trusted=False))
    return rows
