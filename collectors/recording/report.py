"""`spectop report FILE` on a recording: the per-request table and energy by batch level seen.

The figures are the dashboard's definitions, computed once here: a request's mJ/token is its
share of the meter's energy split by committed tokens among the requests that ran beside it
(collectors/energy/attribution.py); a batch level's mJ/token is the joules of the poll windows spent at
that level over the tokens those windows generated (Eq. 3, collectors/docs/energy-ledger.md),
never a mean of per-window ratios. Per request also its joules, tokens per joule and energy-delay
product (collectors/requests/per_request.py); over the recording, the acceptance histogram over
its requests and the share of verify steps by tokens accepted, from the server's per-position
counters summed over the polls (absent where the server has none).

Pitfalls handled: the busy slots at the poll instant are not the window's level (a request that
ended a moment before the poll put its tokens at level 0), so a window's level is the mean
concurrency of the recorded requests over the time any of them ran in it, or the server's
requests per decode step over the window where that is higher (traffic not recorded), and the
busy slots at the poll only where neither says; a window the meter does not cover at both ends
is left out (and counted), not the whole level; failed polls are not a level.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from collectors.energy import ledger
from collectors.energy.attribution import AttributionBook
from collectors.meters import MeterReading
from collectors.recording.reader import MeterEntry, Recording, RequestsEntry
from collectors.requests import per_request
from collectors.requests.record import RequestRecord
from collectors.requests.router import parse_tag
from collectors.servers.snapshot import ServerSnapshot

RECORDING_SUMMARY_SCHEMA = "spectop.recording_summary/1"


def summarize_recording(recording: Recording) -> dict[str, Any]:
    polls = [e.payload for e in recording.entries if isinstance(e.payload, ServerSnapshot)]
    readings = sorted(
        (r for e in recording.entries if isinstance(e.payload, MeterEntry) for r in e.payload.readings),
        key=lambda r: r.t_s,
    )
    records: dict[str, RequestRecord] = {}
    for e in recording.entries:
        if isinstance(e.payload, RequestsEntry):
            for record in e.payload.records:  # a later record of one id replaces it, as live
                records[record.request_id] = record
    return {
        "schema": RECORDING_SUMMARY_SCHEMA,
        "server_url": recording.server_url,
        "meter": recording.meter.name if recording.meter else None,
        "duration_s": recording.duration_s,
        "polls": len(polls),
        "requests": request_rows(list(records.values()), readings, polls),
        "acceptance_histogram": acceptance_histogram(list(records.values())),
        "accepted_per_step": accepted_per_step(polls),
        "batch_levels": batch_levels(polls, readings, list(records.values())),
        "skipped": list(recording.skipped),
    }


def request_rows(
    records: list[RequestRecord], readings: list[MeterReading], polls: Sequence[ServerSnapshot] = ()
) -> list[dict[str, Any]]:
    book = AttributionBook(max_records=len(records) + 1)
    for record in records:
        book.add(record)
    # traffic the recording has no record of takes its share, as live; routed, the polls are one
    # server's of two, which cannot tell it (tui/routing.py)
    book.settle(readings, () if any(parse_tag(r.tag) for r in records) else polls)
    rows = []
    for r in records:
        share = book.results.get(r.request_id)
        routed = parse_tag(r.tag)
        source = f"proxy→{routed.name}" if routed else r.tag.partition(":")[0] or "client"
        covered_j = share.energy_j if share and share.covered else None
        energy = per_request.request_energy(covered_j, r.committed_tokens, r.duration_s)
        rows.append(
            {
                "request_id": r.request_id,
                "source": source,
                "tokens": r.committed_tokens,
                "drafted": r.draft_n,
                "accepted": r.draft_n_accepted,
                "acceptance": r.acceptance,
                "mean_advance": r.mean_advance,
                "tok_s": r.tok_s,
                "mj_per_token": share.mj_per_token if share else None,
                "shared": bool(share and share.shared),
                "e2e_s": r.duration_s,
                "energy_j": energy.energy_j if energy else None,
                "tokens_per_j": energy.tokens_per_j if energy else None,
                "edp_js": energy.edp_js if energy else None,
                "ttft_ms": r.latency.ttft_ms,
                "gap_p95_ms": r.latency.chunk_gaps.p95_ms,
                "gap_p99_ms": r.latency.chunk_gaps.p99_ms,
                "error": r.error,
            }
        )
    return rows


def acceptance_histogram(records: Sequence[RequestRecord]) -> dict[str, Any]:
    """Requests per tenth of acceptance; those without the server's counts, or that drafted
    nothing, are counted apart."""
    hist = per_request.acceptance_histogram(r.acceptance for r in records if r.ok)
    return {"bins": hist.labels(), "requests": list(hist.counts), "without_counts": hist.no_counts}


def accepted_per_step(polls: Sequence[ServerSnapshot]) -> dict[str, Any] | None:
    """The share of verify steps that accepted 0..K draft tokens over the recording's polls, from
    the server's per-position counters (S_j summed before dividing); None without them."""
    windows = [(p.window_per_position, p.window_steps) for p in polls if p.ok]
    survival = per_request.summed_survival(windows)
    if not survival:
        return None
    steps = sum(s or 0 for pos, s in windows if pos)
    return {"steps": steps, "share": per_request.accepted_per_step_from_survival(survival)}


def batch_levels(
    polls: list[ServerSnapshot], readings: list[MeterReading], records: Sequence[RequestRecord] = ()
) -> list[dict[str, Any]]:
    """Time, joules and tokens of the poll windows at each level, lowest level first; a level's
    `windows_left_out` were not covered by the meter (then `covered` is false)."""
    times_s = [r.t_s for r in readings]
    energies_j = [r.energy_j for r in readings]
    levels: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"time_s": 0.0, "energy_j": 0.0, "tokens": 0, "windows": 0, "windows_left_out": 0}
    )
    spans = [(r.t_send_s, r.t_done_s) for r in records]
    for snap in polls:
        if not snap.ok or not snap.window_s:
            continue
        t0_s = snap.taken_at_s - snap.window_s
        busy = window_level(spans, t0_s, snap.taken_at_s, snap.busy_slots_per_decode, snap.slots_busy)
        if busy is None:
            continue
        level = levels[busy]
        energy_j = ledger.window_energy_j(times_s, energies_j, t0_s, snap.taken_at_s)
        if energy_j is None:
            level["windows_left_out"] += 1
            continue
        level["windows"] += 1
        level["time_s"] += snap.window_s
        level["tokens"] += snap.window_tokens or 0
        level["energy_j"] += energy_j
    rows = []
    for busy, level in sorted(levels.items()):
        energy_j = level["energy_j"] if level["windows"] else None
        rows.append(
            {
                "busy_slots": busy,
                "time_s": level["time_s"],
                "energy_j": energy_j,
                "tokens": level["tokens"],
                "mj_per_token": ledger.mj_per_token(energy_j, level["tokens"])
                if energy_j is not None
                else None,
                "covered": not level["windows_left_out"],
                "windows": level["windows"],
                "windows_left_out": level["windows_left_out"],
            }
        )
    return rows


def window_level(
    spans: list[tuple[float, float]],
    t0_s: float,
    t1_s: float,
    per_decode: float | None,
    busy_at_poll: int | None,
) -> int | None:
    """A poll window's batch level: the recorded requests' mean concurrency over the time any ran
    in it, or the server's requests per decode step where higher; the busy slots at the poll
    instant only where neither is known. None: nothing says."""
    spans = [(a, b) for a, b in spans if a < t1_s and t0_s < b]
    edges = sorted({t0_s, t1_s, *(min(max(t, t0_s), t1_s) for span in spans for t in span)})
    running_s = request_s = 0.0
    for u, v in zip(edges, edges[1:]):
        at_once = sum(1 for a, b in spans if a < v and u < b)  # every span edge is a cut
        if at_once:
            running_s += v - u
            request_s += at_once * (v - u)
    own = round(request_s / running_s) if running_s > 0 else None
    server = round(per_decode) if per_decode is not None else None
    if own is None and server is None:
        return busy_at_poll
    return max(own or 0, server or 0)
