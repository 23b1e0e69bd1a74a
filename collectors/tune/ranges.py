"""A schedule's levels as runs of one K: the shape every engine form is written from."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from collectors.tune.schedule import DraftSchedule


@dataclass(frozen=True, slots=True)
class KRange:
    """Batches `first`..`last` (inclusive) run K `k`; `first` is a level's batch, or 1 for the first."""

    first: int
    last: int
    k: int


def k_ranges(schedule: DraftSchedule) -> list[KRange]:
    """Consecutive levels with the same K merged; the first starts at 1, each ends before the next
    starts, the last ends at its last level (beyond it the last K holds)."""
    starts: list[tuple[int, int]] = []  # (first batch, K)
    for level in schedule.levels:
        if not starts or starts[-1][1] != level.k:
            starts.append((level.batch, level.k))
    starts[0] = (1, starts[0][1])
    out = []
    for i, (first, k) in enumerate(starts):
        last = starts[i + 1][0] - 1 if i + 1 < len(starts) else schedule.levels[-1].batch
        out.append(KRange(first, last, k))
    return out


def off_from(schedule: DraftSchedule) -> int | None:
    """The batch from which drafting is off for good: the first of the last range, when its K is 0
    and some range below it drafts; None otherwise."""
    ranges = k_ranges(schedule)
    if len(ranges) < 2 or ranges[-1].k != 0:
        return None
    return ranges[-1].first


def one_threshold(schedule: DraftSchedule) -> bool:
    """Drafting at every batch below `off_from` and off from it: a schedule one switch can apply."""
    ranges = k_ranges(schedule)
    return off_from(schedule) is not None and all(r.k > 0 for r in ranges[:-1])


def main_k(schedule: DraftSchedule) -> int:
    """The K most drafting levels run (the lowest batch's on a tie): one server's one draft length."""
    drafting = [level.k for level in schedule.levels if level.k > 0]
    if not drafting:
        return 0
    counts = Counter(drafting)
    return max(drafting, key=lambda k: (counts[k], -drafting.index(k)))
