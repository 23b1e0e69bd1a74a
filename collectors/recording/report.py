"""`spectop report FILE` on a recording: the per-request table and energy by batch level seen.

The figures are the dashboard's definitions, computed once here: a request's mJ/token is its
share of the meter's energy split by committed tokens among the requests that ran beside it
(collectors/energy/attribution.py); a batch level's mJ/token is the joules of the poll windows spent at
that many busy slots over the tokens those windows generated (Eq. 3, collectors/docs/energy-ledger.md),
never a mean of per-window ratios.

Pitfalls handled: a poll window the meter does not cover at both ends adds its time and tokens
but no joules, and the level's energy figures are then left out rather than understated
(`covered: false`); failed polls and windows without a busy-slot count are not a level.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from collectors.energy import ledger
from collectors.energy.attribution import AttributionBook
from collectors.meters import MeterReading
from collectors.recording.reader import MeterEntry, Recording, RequestsEntry
from collectors.requests.record import RequestRecord
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
        "requests": request_rows(list(records.values()), readings),
        "batch_levels": batch_levels(polls, readings),
        "skipped": list(recording.skipped),
    }


def request_rows(records: list[RequestRecord], readings: list[MeterReading]) -> list[dict[str, Any]]:
    book = AttributionBook(max_records=len(records) + 1)
    for record in records:
        book.add(record)
    book.settle(readings)
    rows = []
    for r in records:
        share = book.results.get(r.request_id)
        source = r.tag.partition(":")[0] or "client"
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
                "ttft_ms": r.latency.ttft_ms,
                "gap_p95_ms": r.latency.chunk_gaps.p95_ms,
                "gap_p99_ms": r.latency.chunk_gaps.p99_ms,
                "error": r.error,
            }
        )
    return rows


def batch_levels(polls: list[ServerSnapshot], readings: list[MeterReading]) -> list[dict[str, Any]]:
    """Time, joules and tokens of the poll windows at each busy-slots level, lowest level first."""
    times_s = [r.t_s for r in readings]
    energies_j = [r.energy_j for r in readings]
    levels: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"time_s": 0.0, "energy_j": 0.0, "tokens": 0, "covered": True}
    )
    for snap in polls:
        if not snap.ok or not snap.window_s or snap.slots_busy is None:
            continue
        level = levels[snap.slots_busy]
        level["time_s"] += snap.window_s
        level["tokens"] += snap.window_tokens or 0
        energy_j = ledger.window_energy_j(
            times_s, energies_j, snap.taken_at_s - snap.window_s, snap.taken_at_s
        )
        if energy_j is None:
            level["covered"] = False
        else:
            level["energy_j"] += energy_j
    rows = []
    for busy, level in sorted(levels.items()):
        covered = level["covered"] and bool(readings)
        energy_j = level["energy_j"] if covered else None
        rows.append(
            {
                "busy_slots": busy,
                "time_s": level["time_s"],
                "energy_j": energy_j,
                "tokens": level["tokens"],
                "mj_per_token": ledger.mj_per_token(energy_j, level["tokens"])
                if energy_j is not None
                else None,
                "covered": covered,
            }
        )
    return rows
