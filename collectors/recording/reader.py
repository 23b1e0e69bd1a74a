"""Reading a recording (collectors/recording/writer.py) back into the objects the dashboard was given.

Pitfalls handled: a recording comes from anywhere (it is attached to bug reports), so a file that
is not one stops with one line naming it, and a torn last line (the session was killed mid-write)
or a corrupt line is skipped and counted, never a traceback; the objects re-made from it pass
through the same constructors as live ones (ServerSnapshot makes its text printable). A rotated
recording's parts are read one at a time: each starts with its own header.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.meters import MeterInfo, MeterReading
from collectors.recording.typecheck import wrong_field
from collectors.recording.writer import MAX_RECORDING_BYTES, RECORDING_SCHEMA
from collectors.requests.latency import ChunkEvent, LatencyProfile, Tail
from collectors.requests.record import RequestRecord
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import events
from collectors.sweep.arms import ArmSpec
from collectors.sweep.codec import from_json
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.point import Flag, SweepPoint
from collectors.sweep.records import summary_from_json

MAX_HEADER_BYTES = 1 << 20
MAX_ENTRY_BYTES = 16 << 20  # one line of a recording: a poll, a meter batch, a sweep's summary
MAX_READ_BYTES = 4 * MAX_RECORDING_BYTES  # a part is at most MAX_RECORDING_BYTES when written

# every tuple field of a snapshot (JSON gives lists): found from the dataclass, so a field added
# to ServerSnapshot later reads back as a tuple too
_TUPLE_FIELDS = tuple(f.name for f in fields(ServerSnapshot) if f.default == ())


def _tuples(value: Any) -> tuple[Any, ...]:
    return tuple(_tuples(v) if isinstance(v, list) else v for v in value or ())


@dataclass(frozen=True, slots=True)
class MeterEntry:
    readings: tuple[MeterReading, ...]
    error: str | None


@dataclass(frozen=True, slots=True)
class RequestsEntry:
    records: tuple[RequestRecord, ...]  # taken in by the app at once


Payload = ServerSnapshot | MeterEntry | RequestsEntry | events.SweepEvent


@dataclass(frozen=True, slots=True)
class Entry:
    t_s: float  # seconds since the recording started
    payload: Payload


@dataclass(frozen=True, slots=True)
class Recording:
    path: Path
    server_url: str
    title: str
    meter: MeterInfo | None
    t0_s: float  # the recording process's monotonic time at its start
    wall0_unix_s: float | None  # the wall clock at t0_s (None: a header that says neither)
    entries: tuple[Entry, ...]
    skipped: tuple[str, ...] = field(default=())  # "line N: why", for the lines left out

    @property
    def duration_s(self) -> float:
        return self.entries[-1].t_s if self.entries else 0.0


def is_recording(path: Path) -> bool:
    """True when `path` is a file whose first line is a recording's header."""
    try:
        with Path(path).open(encoding="utf-8") as f:
            first = f.readline(100_000)
        return bool(json.loads(first).get("schema", "").startswith("spectop.recording/"))
    except (OSError, ValueError, AttributeError):
        return False


def read_recording(path: Path) -> Recording:
    path = Path(path)
    try:
        with path.open("rb") as file:
            head = _json(file.readline(MAX_HEADER_BYTES).decode("utf-8", errors="replace"))
            if not isinstance(head, dict) or head.get("schema") != RECORDING_SCHEMA:
                raise SpectopError(
                    f"{path} is not a spectop recording ({RECORDING_SCHEMA})",
                    "give a file written by spectop --record FILE",
                )
            lines, skipped = _entry_lines(file)
    except OSError as exc:
        raise SpectopError(
            f"{path}: cannot read it ({exc.strerror})", "give a file written by --record"
        ) from None
    entries = []
    for number, line in enumerate(lines, start=2):
        if line is None:
            skipped.append(f"line {number}: longer than {MAX_ENTRY_BYTES >> 20} MB")
            continue
        try:
            body = json.loads(line)
            payload = decode(body)
            wrong = wrong_field(payload)
            if wrong is not None:
                skipped.append(f"line {number}: {wrong} is not what a {type(payload).__name__} holds")
                continue
            entries.append(Entry(float(body["t"]), payload))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError, SpectopError) as exc:
            skipped.append(f"line {number}: {type(exc).__name__}")
    meter = head.get("meter")
    entries.sort(key=lambda e: e.t_s)
    t0_s = float(head.get("t0_s", 0.0))
    wall0_unix_s = _wall0_unix_s(head)
    if head.get("part", 1) != 1 and entries:
        # a later part's times count from the session's start, hours before its first line: it
        # starts at its first entry, and t0_s moves with it so t0_s + t_s is still the monotonic time
        offset_s = entries[0].t_s
        entries = [Entry(e.t_s - offset_s, e.payload) for e in entries]
        t0_s += offset_s
        wall0_unix_s = None if wall0_unix_s is None else wall0_unix_s + offset_s
    return Recording(
        path=path,
        server_url=printable(str(head.get("server_url", ""))),  # untrusted text, like a server's
        title=printable(str(head.get("title", "spectop"))),
        meter=_meter_info(meter) if meter else None,
        t0_s=t0_s,
        wall0_unix_s=wall0_unix_s,
        entries=tuple(entries),
        skipped=tuple(skipped),
    )


def _wall0_unix_s(head: dict[str, Any]) -> float | None:
    """The wall clock at the header's t0_s: its own field, or (an older recording) its `started`
    time, to the second."""
    wall0 = head.get("wall0_unix_s")
    if isinstance(wall0, (int, float)) and not isinstance(wall0, bool) and math.isfinite(wall0):
        return float(wall0)
    try:
        started = datetime.fromisoformat(str(head["started"]))
    except (KeyError, ValueError):
        return None
    return started.timestamp() if started.tzinfo else None


def _entry_lines(file: BinaryIO) -> tuple[list[str | None], list[str]]:
    """The lines after the header, each at most `MAX_ENTRY_BYTES` (None for a longer one), read up
    to `MAX_READ_BYTES` in all: a file that never ends (`/dev/zero`, a FIFO fed forever) is
    read no further, and what was read is kept and said."""
    lines: list[str | None] = []
    total = 0
    while total < MAX_READ_BYTES:
        line = file.readline(MAX_ENTRY_BYTES + 1)
        if not line:
            return lines, []
        total += len(line)
        if len(line) > MAX_ENTRY_BYTES:
            while line and not line.endswith(b"\n") and total < MAX_READ_BYTES:
                line = file.readline(1 << 20)  # the rest of the long line, read and dropped
                total += len(line)
            lines.append(None)
            continue
        lines.append(line.decode("utf-8", errors="replace").rstrip("\r\n"))
    return lines, [f"stopped reading after {MAX_READ_BYTES >> 20} MB"]


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def decode(body: dict[str, Any]) -> Payload:
    kind = body["kind"]
    if kind == "poll":
        return snapshot_of(body)
    if kind == "meter":
        readings = tuple(MeterReading(t, e, p, fault) for t, e, p, fault in body["readings"])
        error = body.get("error")
        return MeterEntry(readings, printable(error) if isinstance(error, str) else error)
    if kind == "requests":
        return RequestsEntry(tuple(record_of(r) for r in body["records"]))
    if kind == "sweep":
        return sweep_event_of(body)
    raise KeyError(kind)


def _known(cls: type, body: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in body.items() if k in names}


def snapshot_of(body: dict[str, Any]) -> ServerSnapshot:
    known = _known(ServerSnapshot, body)
    for name in _TUPLE_FIELDS:
        known[name] = _tuples(known.get(name))
    return ServerSnapshot(**known)


def record_of(body: dict[str, Any]) -> RequestRecord:
    known = _known(RequestRecord, body)
    known["events"] = tuple(ChunkEvent(t, n, key) for t, n, key in body["events"])
    lat = body["latency"]
    known["latency"] = LatencyProfile(
        ttft_ms=lat["ttft_ms"],
        chunk_gaps=Tail(**lat["chunk_gaps"]),
        token_gaps=Tail(**lat["token_gaps"]),
        step_gaps=Tail(**lat["step_gaps"]),
        burst_sizes=tuple(lat["burst_sizes"]),
        events=lat["events"],
        tokens=lat["tokens"],
    )
    return RequestRecord(**known)


def _key(body: dict[str, Any]) -> PointKey:
    return PointKey(**_known(PointKey, body))


def sweep_event_of(body: dict[str, Any]) -> events.SweepEvent:
    name = body["event"]
    if name == "SweepStarted":
        plan = body["plan"]
        return events.SweepStarted(
            run_dir=Path(body["run_dir"]),
            plan=SweepPlan(
                batches=tuple(plan["batches"]), max_tokens=plan["max_tokens"], passes=plan["passes"]
            ),
            schedule=tuple(_key(k) for k in body["schedule"]),
            arms=tuple(
                ArmSpec(a["name"], a["url"], tuple(a["argv"]), a["derived"], tuple(a["dropped"]))
                for a in body["arms"]
            ),
        )
    if name == "IdleMeasured":
        return events.IdleMeasured(body["power_w"], body["duration_s"], from_json(Flag, body.get("flag")))
    if name == "PointProgressed":
        return events.PointProgressed(body["index"], _key(body["key"]), body["state"])
    if name == "PointDone":
        return events.PointDone(body["index"], _key(body["key"]), from_json(SweepPoint, body["row"]))
    if name == "PointsAdded":
        return events.PointsAdded(body["first_index"], tuple(_key(k) for k in body["keys"]))
    if name == "SweepEnded":
        summary = summary_from_json(body["summary"])
        return events.SweepEnded(Path(body["run_dir"]), summary, body["cancelled"], body.get("error"))
    raise KeyError(name)


def _meter_info(body: dict[str, Any]) -> MeterInfo:
    known = _known(MeterInfo, body)
    known["devices"] = tuple(known.get("devices") or ())
    known["notes"] = tuple(known.get("notes") or ())
    return MeterInfo(**known)
