"""Requests read from a server's log, as `RequestRecord`s beside spectop's own (tag "log").

Pitfalls handled: the log says how long a request took, not when on spectop's clock, so its end is
the moment its last line arrived, or, where the log has elapsed-time stamps, the stamp placed on
the monotonic clock by the least-delayed line seen (a pipe's buffering delays lines, never speeds
them up); its start is the end less the logged total time. The log gives totals, not per-token
times: the first token closes the prompt time and the rest close the eval time, and energy
attribution spreads each over its time (collectors/energy/attribution.py: lumps split meter interval
by meter interval made the figure follow the meter's rate); the chunk-gap tails stay unknown. A request spectop sent itself is in the log too: `is_own` matches it by its tokens
and end time, and the own row (which has the stream's latency) is the one kept. Steps are every
decode step, T − 1 − A, as for a stream (collectors/requests/streams.py), so G is the sweep's G, not the
log's `mean len`, which counts drafting steps only. A build that drafts but logs no draft counts
(`LoggedRequest.draft_unknown`) gives no steps, so the row's acceptance and G are unknown, never a
G of 1.00. Task ids start again when the server does: a repeated id gets a suffix, never replaces
an older row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from collectors.energy import ledger
from collectors.requests.latency import ChunkEvent, LatencyProfile, Tail
from collectors.requests.record import RequestRecord, busy_figures
from collectors.servers.llamacpp.log import LoggedRequest, LogParser, parse_line

TAG = "log"
OWN_MATCH_S = 1.0  # an own request and its log block end within this of each other


@dataclass(frozen=True, slots=True)
class TimedRequest:
    """A logged request and when it ended on the monotonic clock."""

    logged: LoggedRequest
    t_done_s: float


class LogReader:
    """Lines in, requests with their end on spectop's clock out."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, hold_s: float = 0.0) -> None:
        self._clock = clock
        self.hold_s = hold_s  # held this long past their end, so an own request's record comes first
        self._parser = LogParser()
        self._offset_s: float | None = None  # monotonic − stamp, the least seen
        self._held: list[TimedRequest] = []
        self.skipped_lines = 0  # slot lines with a number that is none (the rest of the log is read)

    def feed(self, lines: Iterable[str]) -> list[TimedRequest]:
        """The requests ended at least `hold_s` ago, among those held and those `lines` complete."""
        now_s = self._clock()
        self._held += self._read(lines, now_s)
        due = [t for t in self._held if t.t_done_s <= now_s - self.hold_s]
        self._held = [t for t in self._held if t.t_done_s > now_s - self.hold_s]
        return due

    def _read(self, lines: Iterable[str], now_s: float) -> list[TimedRequest]:
        out = []
        for line in lines:
            try:
                parsed = parse_line(line)
                finished = self._parser.feed(line)
            except (ValueError, OverflowError):  # `= 1.2.3 ms`, a 5000-digit id: skipped, counted
                self.skipped_lines += 1
                continue
            if parsed is not None and parsed.stamp_s is not None:
                offset = now_s - parsed.stamp_s
                if self._offset_s is None or offset < self._offset_s or offset > self._offset_s + 60:
                    self._offset_s = offset  # a jump forward of a minute: the server restarted
            for logged in finished:
                if logged.stamp_s is not None and self._offset_s is not None:
                    t_done_s = min(now_s, logged.stamp_s + self._offset_s)
                else:
                    t_done_s = now_s
                out.append(TimedRequest(logged, t_done_s))
        return out


def paced_events(t_first_s: float, t_done_s: float, tokens: int) -> tuple[ChunkEvent, ...]:
    """The first token at `t_first_s`, the rest at `t_done_s`: spread over the eval time when split."""
    if tokens <= 0:
        return ()
    if tokens == 1:
        return (ChunkEvent(t_first_s, 1),)
    return (ChunkEvent(t_first_s, 1), ChunkEvent(t_done_s, tokens - 1))


def to_record(
    timed: TimedRequest, server_url: str, busy_samples: Sequence[int] = (), request_id: str | None = None
) -> RequestRecord:
    """The request as a record: `busy_samples` are the server's busy slots polled while it ran.

    A poll reading no busy slot missed this request (its window is placed from the log's timing,
    which a late line shifts), so it is left out (`busy_figures`); none left: concurrency unknown.
    """
    concurrency_mean, concurrency_max = busy_figures(busy_samples)
    r = timed.logged
    t_send_s = timed.t_done_s - r.total_ms / 1000.0
    t_first_s = t_send_s + r.prompt_ms / 1000.0
    tokens = r.generated_tokens
    empty = Tail.of([])
    return RequestRecord(
        request_id=request_id or f"s{r.slot_id} t{r.task_id}",
        server_url=server_url,
        route="",
        t_send_s=t_send_s,
        t_done_s=timed.t_done_s,
        events=paced_events(t_first_s, timed.t_done_s, tokens),
        latency=LatencyProfile(r.prompt_ms if tokens else None, empty, empty, empty, (), 0, tokens),
        committed_tokens=tokens,
        prompt_tokens=r.prompt_tokens,
        draft_n=r.draft_n,
        draft_n_accepted=r.draft_n_accepted,
        server_steps=None
        if r.draft_unknown
        else (max(0, ledger.every_step_count(tokens, r.draft_n_accepted or 0, 1)) if tokens else 0),
        concurrency_mean=concurrency_mean,
        concurrency_max=concurrency_max,
        tag=f"{TAG}:slot {r.slot_id}",
        tokens_per_event_exact=False,
    )


def is_own(log_record: RequestRecord, own: RequestRecord) -> bool:
    """The same request, seen by spectop's client and in the log: same tokens, same end."""
    return (
        not own.tag.startswith(TAG)
        and own.committed_tokens == log_record.committed_tokens
        and (own.draft_n is None or own.draft_n == log_record.draft_n)
        and abs(own.t_done_s - log_record.t_done_s) <= OWN_MATCH_S
    )


class LogRecords:
    """Turns timed log requests into records, once each, leaving out spectop's own requests."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self._uses: dict[str, int] = {}  # how often each slot/task id was kept

    def new_records(
        self,
        requests: Iterable[TimedRequest],
        own: Iterable[RequestRecord],
        busy_during: Callable[[float, float], Sequence[int]],
    ) -> list[RequestRecord]:
        own_records = [r for r in own if not r.tag.startswith(TAG)]
        out = []
        for timed in requests:
            base = f"s{timed.logged.slot_id} t{timed.logged.task_id}"
            n = self._uses.get(base, 0) + 1  # the server restarted: its task ids start again
            request_id = base if n == 1 else f"{base} #{n}"
            t_send_s = timed.t_done_s - timed.logged.total_ms / 1000.0
            record = to_record(timed, self.server_url, busy_during(t_send_s, timed.t_done_s), request_id)
            if any(is_own(record, o) for o in own_records):
                continue
            self._uses[base] = n
            out.append(record)
        return out
