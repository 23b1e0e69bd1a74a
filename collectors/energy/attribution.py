"""Per-request energy as a function of the set of records and the meter series, not of arrival order.

Pitfalls handled: records arrive one at a time (a sweep point's B requests, a probe), so a figure
computed when a record arrives is stale as soon as an overlapping one comes: each arrival marks its
connected group of overlapping records for recomputation. A record arrives before the meter has
read past its end: its figure waits (no partial figure shown as the value) and is computed when the
meter catches up. A record dropped from the table still ran: it stays an input while a kept record
overlaps it. Traffic spectop did not see shares the meter: where the server counted its tokens over
the request (unseen.py), that traffic takes its share by tokens, and a figure waits for the poll
that counts past its end; where it did not, a server busier than spectop's own overlapping
requests marks the figure `shared`, not shown as the request's own.
The split itself is `ledger.attribute_energy_j` (pure); this module keeps the books around it.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from collectors.energy import ledger, unseen
from collectors.requests.record import RequestRecord


class MeterPoint(Protocol):
    """A cumulative meter reading: a power point, a MeterReading."""

    @property
    def t_s(self) -> float: ...

    @property
    def energy_j(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Attribution:
    """One request's share of the meter's energy, and whether that share is its own."""

    energy_j: float  # over the part of the request the meter covers
    committed_tokens: int | None
    covered: bool  # meter readings reach both ends of the request; else energy_j is a lower bound
    own_concurrency: int  # most of spectop's requests running at once while it ran, itself included
    shared: bool  # the server was busier than that, and its counts did not say by how many tokens
    unseen_tokens: float | None = (
        None  # the server's tokens meanwhile that were not spectop's; None: not counted
    )

    @property
    def mj_per_token(self) -> float | None:
        """Attributed joules over the request's committed tokens; None until the meter covers it."""
        if not self.covered or not self.committed_tokens:
            return None
        return ledger.mj_per_token(self.energy_j, self.committed_tokens)


def shared_with_unseen(concurrency_max: int | None, own_concurrency: int) -> bool:
    """True when the server had more requests busy than spectop's own overlapping ones.

    `concurrency_max` is the server's busy slots sampled while the request ran (None: never
    sampled, so nothing can be said). A server's request is busy only inside the client's span of
    it, so without other traffic its busy count never exceeds spectop's own count.
    """
    return concurrency_max is not None and concurrency_max > own_concurrency


def overlaps(a: RequestRecord, b: RequestRecord) -> bool:
    """Spans that share time; touching ends do not."""
    return a.t_send_s < b.t_done_s and b.t_send_s < a.t_done_s


def activity(record: RequestRecord) -> ledger.RequestActivity:
    # events whose times or counts are not the server's (a log's pacing, guessed counts) are spread
    events = tuple((e.t_s, float(e.n_tokens)) for e in record.events)
    return ledger.RequestActivity(
        record.request_id, record.t_send_s, record.t_done_s, events, spread=not record.tokens_per_event_exact
    )


def own_concurrency(record: RequestRecord, others: Iterable[RequestRecord]) -> int:
    """Most of `others` (the record itself among them) running at once within the record's span."""
    changes = sorted(
        (t, step)
        for o in others
        if o is record or overlaps(o, record)
        for t, step in ((max(o.t_send_s, record.t_send_s), 1), (min(o.t_done_s, record.t_done_s), -1))
    )  # at equal times an end (-1) sorts before a start: touching spans are not at once
    running = most = 0
    for _, step in changes:
        running += step
        most = max(most, running)
    return max(most, 1)


def attribute_records(
    records: Sequence[RequestRecord],
    meter_times_s: Sequence[float],
    meter_energies_j: Sequence[float],
    polls: Sequence[unseen.TokenPoll] = (),
    await_counts: bool = False,
    others: Sequence[unseen.UnseenWindow] | None = None,
) -> dict[str, Attribution]:
    """Every record's attribution from the records, the meter series and the server's polls (pure).

    The unseen traffic is the polls' tokens less the records' (`others`, where the caller worked
    it out from all of spectop's requests). `await_counts`: a record the polls do not count past
    is not covered yet.
    """
    acts = [activity(r) for r in records]
    if others is None:
        others = unseen.unseen_windows(polls, acts)
    shares = [(w.t0_s, w.t1_s, w.share) for w in others]
    joules, _ = ledger.attribute_energy_j(meter_times_s, meter_energies_j, acts, shares)
    first_s = meter_times_s[0] if meter_times_s else float("inf")
    last_s = meter_times_s[-1] if meter_times_s else float("-inf")
    out = {}
    for r in records:
        own_at_once = own_concurrency(r, records)
        counted = unseen.counts_cover(others, r.t_send_s, r.t_done_s)
        out[r.request_id] = Attribution(
            energy_j=joules[r.request_id],
            committed_tokens=r.committed_tokens,
            covered=first_s <= r.t_send_s and r.t_done_s <= last_s and (counted or not await_counts),
            own_concurrency=own_at_once,
            shared=shared_with_unseen(r.concurrency_max, own_at_once) and not counted,
            unseen_tokens=unseen.unseen_tokens(others, r.t_send_s, r.t_done_s) if counted else None,
        )
    return out


def overlap_groups(records: Iterable[RequestRecord]) -> list[list[RequestRecord]]:
    """Connected groups of records whose spans overlap, directly or through others."""
    groups: list[list[RequestRecord]] = []
    end_s = float("-inf")
    for r in sorted(records, key=lambda r: (r.t_send_s, r.t_done_s)):
        if groups and r.t_send_s < end_s:
            groups[-1].append(r)
            end_s = max(end_s, r.t_done_s)
        else:
            groups.append([r])
            end_s = r.t_done_s
    return groups


class AttributionBook:
    """spectop's own records by id and each one's attribution, the same whatever order they came in.

    `add` stores a record and marks it; `settle` recomputes every marked record's group (and the
    records that were waiting for the meter to read past their end) from the meter series.
    """

    def __init__(self, max_records: int = 200) -> None:
        self.max_records = max_records
        self.records: OrderedDict[str, RequestRecord] = OrderedDict()
        self.results: dict[str, Attribution] = {}
        self._inputs: dict[str, RequestRecord] = {}  # the records, and dropped ones still overlapping one
        self._dirty: set[str] = set()
        self._waiting: set[str] = set()  # computed before the meter read past their end
        self._activities: dict[str, tuple[RequestRecord, ledger.RequestActivity]] = {}

    def add(self, record: RequestRecord) -> None:
        """Store a record (the oldest beyond `max_records` is dropped); its group is recomputed on settle."""
        old = self._inputs.get(record.request_id)
        if old is not None:  # replaced: what overlapped the old span changes too
            self._dirty.update(k for k, r in self.records.items() if overlaps(r, old))
        self.records[record.request_id] = record
        self.records.move_to_end(record.request_id)
        self._inputs[record.request_id] = record
        self._dirty.add(record.request_id)
        while len(self.records) > self.max_records:
            dropped, _ = self.records.popitem(last=False)
            self.results.pop(dropped, None)
            self._dirty.discard(dropped)
            self._waiting.discard(dropped)
        self._forget_dropped()

    def pending(self, last_meter_t_s: float | None, counted_until_s: float | None = None) -> bool:
        """Whether `settle` would recompute anything, given the meter's latest reading time and,
        where the server counts its tokens, its latest poll's time."""
        if self._dirty:
            return True
        return last_meter_t_s is not None and any(
            self._due(self.records[k], last_meter_t_s, counted_until_s) for k in self._waiting
        )

    @staticmethod
    def _due(record: RequestRecord, last_meter_t_s: float, counted_until_s: float | None) -> bool:
        return record.t_done_s <= last_meter_t_s and (
            counted_until_s is None or record.t_done_s <= counted_until_s
        )

    def settle(self, meter: Sequence[MeterPoint], polls: Sequence[unseen.TokenPoll] = ()) -> bool:
        """Recompute what new records, meter readings or polls change; True when any result changed.

        `polls` are the server's: where the latest counts tokens, a figure waits for a poll past its end.
        """
        last_s = meter[-1].t_s if meter else None
        counting = bool(polls) and polls[-1].window_tokens is not None
        counted_until_s = polls[-1].taken_at_s if counting else None
        if not self.pending(last_s, counted_until_s):
            return False
        if last_s is not None:
            self._dirty.update(
                k for k in self._waiting if self._due(self.records[k], last_s, counted_until_s)
            )
        points = list(meter)
        times_s = [p.t_s for p in points]
        energies_j = [p.energy_j for p in points]
        inputs = list(self._inputs.values())
        others = unseen.unseen_windows(polls, [self._activity(r) for r in inputs])
        changed = False
        for group in overlap_groups(inputs):
            if not any(r.request_id in self._dirty for r in group):
                continue
            # the meter points around the group: one at or before its start, one at or after its end
            lo = max(0, bisect.bisect_right(times_s, min(r.t_send_s for r in group)) - 1)
            hi = bisect.bisect_left(times_s, max(r.t_done_s for r in group)) + 1
            results = attribute_records(group, times_s[lo:hi], energies_j[lo:hi], (), counting, others)
            for key, result in results.items():
                if key not in self.records:
                    continue  # a dropped record: an input only
                changed = changed or self.results.get(key) != result
                self.results[key] = result
                if last_s is None or not self._due(self.records[key], last_s, counted_until_s):
                    self._waiting.add(key)
                else:
                    self._waiting.discard(key)
        self._dirty.clear()
        return changed

    def _activity(self, record: RequestRecord) -> ledger.RequestActivity:
        """The record's activity, built once per record (a settle reads every input's)."""
        known = self._activities.get(record.request_id)
        if known is None or known[0] is not record:
            known = (record, activity(record))
            self._activities[record.request_id] = known
        return known[1]

    def _forget_dropped(self) -> None:
        """Keep a dropped record as an input only while a stored record overlaps it."""
        for key in [k for k in self._inputs if k not in self.records]:
            ghost = self._inputs[key]
            if not any(overlaps(ghost, r) for r in self.records.values()):
                del self._inputs[key]
                self._activities.pop(key, None)
