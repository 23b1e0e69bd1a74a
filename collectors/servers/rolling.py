"""Drafting figures over the rolling window, not over one poll.

llama-server moves its token and speculative counters only when a request finishes, so most 1 s
poll windows hold no finished request and their acceptance and G are unknown; shown poll by poll
the figures flicker between a value and a dash. Summing the counts of the polls in the rolling
window (the same one the energy figure uses) gives figures over whole requests, with the same
definitions (collectors/servers/snapshot.py, collectors/docs/energy-ledger.md): the merged snapshot's own
properties compute them, so nothing is defined twice. G needs steps and accepted counts from the
same polls, so polls with an unknown step count are left out of the sum when any poll knows its
steps; SGLang's figures are gauges over its last 40 iterations already and ignore the counts.
Survival S_j comes from the same polls as G, so 1 + Σ S_j = G: where a poll that accepted tokens
has no per-position counts, the window's survival is unknown rather than a share of fewer polls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from collectors.servers.latency import ServerLatency, window_latency
from collectors.servers.snapshot import ServerSnapshot


def _sum(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _add_positions(rows: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    width = max((len(r) for r in rows), default=0)
    return tuple(sum(r[j] for r in rows if j < len(r)) for j in range(width))


def rolling_drafting(
    snapshots: Sequence[ServerSnapshot], window_s: float, since_s: float = float("-inf")
) -> ServerSnapshot | None:
    """The latest snapshot with its window counts summed over the polls of the last `window_s`.

    A restart, a failed poll or a poll that began before `since_s` (a sweep's traffic) is left out.
    None when there is no snapshot.
    """
    if not snapshots:
        return None
    latest = snapshots[-1]
    polls = [
        s
        for s in snapshots
        if s.ok
        and not s.restarted
        and s.window_s
        and latest.taken_at_s - s.taken_at_s < window_s
        and s.taken_at_s - s.window_s >= since_s
        and s.window_drafted is not None
        and s.window_accepted is not None
    ]
    with_steps = [s for s in polls if s.window_steps is not None]
    polls = with_steps or polls
    if not polls:
        return dataclasses.replace(
            latest, window_drafted=None, window_accepted=None, window_steps=None, window_per_position=()
        )
    return dataclasses.replace(
        latest,
        window_s=sum(s.window_s or 0.0 for s in polls),
        window_drafted=_sum([s.window_drafted for s in polls]),
        window_accepted=_sum([s.window_accepted for s in polls]),
        window_steps=_sum([s.window_steps for s in polls]),
        window_drafted_steps=_sum([s.window_drafted_steps for s in polls]),
        window_finished=_sum([s.window_finished for s in polls]),
        window_steps_exact=all(s.window_steps_exact for s in polls),
        counters_rounded=any(s.counters_rounded for s in polls),
        window_per_position=_window_positions(polls),
    )


def _window_positions(polls: Sequence[ServerSnapshot]) -> tuple[int, ...]:
    """Per-position accepted counts summed over `polls`; () when a poll that accepted has none."""
    if any(s.window_accepted and not s.window_per_position for s in polls):
        return ()
    return _add_positions([s.window_per_position for s in polls])


def rolling_latency(
    snapshots: Sequence[ServerSnapshot], window_s: float, since_s: float = float("-inf")
) -> ServerLatency | None:
    """The server's latency, cache and finish reasons between the first and the last poll of the
    last `window_s` (histogram bucket deltas, collectors/servers/latency.py).

    Polls before the latest restart or `since_s` (a sweep's traffic) are left out; None when the
    server exports no such counters or fewer than two polls remain.
    """
    if not snapshots or snapshots[-1].latency_counters is None:
        return None
    start_s = max(since_s, snapshots[-1].taken_at_s - window_s)
    polls = [s for s in snapshots if s.ok and s.latency_counters is not None and s.taken_at_s >= start_s]
    restarts = [i for i, s in enumerate(polls) if s.restarted]
    polls = polls[restarts[-1] :] if restarts else polls
    if len(polls) < 2:
        return None
    first, last = polls[0], polls[-1]
    assert first.latency_counters is not None and last.latency_counters is not None  # kept above
    return window_latency(first.latency_counters, last.latency_counters, last.taken_at_s - first.taken_at_s)
