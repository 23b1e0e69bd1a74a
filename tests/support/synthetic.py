"""Deterministic data for UI tests: snapshots from the real captures, records from the real streams."""

from __future__ import annotations

from pathlib import Path

from collectors.meters import MeterInfo, MeterReading
from collectors.requests import streams
from collectors.requests.client import record_of
from collectors.requests.record import RequestRecord
from collectors.servers.llamacpp import collector as llamacpp
from collectors.sweep.events import IdleMeasured, PointDone, PointProgressed, SweepEnded, SweepStarted
from collectors.sweep.plan import SweepPlan
from collectors.sweep.summary import summary_of
from tests.support.captures import raw, sse_lines
from tests.support.sweep_rows import as_point, note25_rows, points, run_meta

URL = "http://127.0.0.1:8080"
METER = MeterInfo(
    name="dcgm",
    devices=("Simulated GPU #0",),
    boundary="GPU board",
    method="counter",
    update_period_s=0.1,
    power_limit_w=700.0,
    detail="test",
)


def snapshots(prefix: str = "draft-simple") -> list:
    """Three real polls: before, busy (4 requests running), after."""
    polls = [
        raw(prefix, "before", "idle", 100.0),
        raw(prefix, "busy", "busy", 101.0),
        raw(prefix, "after", "idle", 102.0),
    ]
    out, prev = [], None
    for cur in polls:
        out.append(llamacpp.derive(prev, cur, URL))
        prev = cur
    return out


def readings(start_s: float = 99.0, seconds: float = 4.0, power_w: float = 40.0) -> list[MeterReading]:
    """A steady 40 W with a step to 60 W in the middle, at 10 Hz."""
    out, energy = [], 0.0
    for i in range(int(seconds * 10) + 1):
        t = start_s + i / 10
        p = power_w if i < seconds * 5 else power_w * 1.5
        if i:
            energy += p / 10
        out.append(MeterReading(t, energy, p))
    return out


def record(
    prefix: str = "draft-simple",
    request_id: str = "r1",
    t_send_s: float = 100.2,
    tag: str = "probe",
    busy_samples: tuple[int, ...] = (1,),
) -> RequestRecord:
    """A captured completion stream as the client records it, alone on the server (`busy_samples`:
    the server's busy slots the client sampled while it ran)."""
    state = streams.StreamState()
    for t_s, line in sse_lines(f"{prefix}.completion.sse.jsonl"):
        streams.feed_line(state, t_send_s + t_s, line, native=True)
    t_done_s = state.events[-1].t_s
    return record_of(state, request_id, URL, "/completion", t_send_s, t_done_s, busy_samples, tag)


def sweep_events(run_dir: Path = Path("results/20261129T000000Z")) -> list:
    """A finished sweep whose rows are note 25's table (collectors/docs/note25.md)."""
    plan = SweepPlan()
    schedule = tuple(k for k in plan.schedule() if k.pass_index == 0)
    rows = note25_rows()
    by_key = {(r["batch"], r["arm"], r["phase"]): r for r in rows}
    events: list = [SweepStarted(run_dir, plan, schedule, ()), IdleMeasured(12.0, 5.0)]
    for i, key in enumerate(schedule):
        row = dict(by_key[(key.batch, key.arm, key.phase or "")])
        row.update(
            tok_s=row["committed_tokens"] / row["window_s"],
            power_w=row["energy_j"] / row["window_s"],
            mj_per_token=1000 * row["energy_j"] / row["committed_tokens"],
            acceptance=0.7 if key.arm == "draft" else None,
        )
        events += [PointProgressed(i, key, "running"), PointDone(i, key, as_point(row))]
    meta = run_meta({"planned_points": len(schedule), "idle_w": 12.0})
    events.append(SweepEnded(run_dir, summary_of(points(rows), meta), False))
    return events
