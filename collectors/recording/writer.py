"""`--record FILE`: every poll, meter reading, request record and sweep event as compact JSON lines.

The first line of a recording (and of every part after a rotation) is a header: the schema, the
server's URL, the meter's identity, the monotonic time the recording started (`t0_s`) and the wall
clock at that moment (`wall0_unix_s`: a replay puts the windows into the energy ledger at the hours
they happened, not at the replay's). Each
later line is `{"t": seconds since t0, "kind": ..., ...}`, one of:
- `poll`: a ServerSnapshot (`json_forms.snapshot_dict`, plus `taken_at_s`);
- `meter`: readings as `[t_s, energy_j, power_w, fault]` and the meter's error;
- `requests`: the RequestRecords the app took in at once (as a live table shows them), each with
  its stream events as `[t_s, n_tokens, step_key]`;
- `sweep`: a sweep event; a finished point's records come as their own `requests` line.
Times inside the objects stay on the recording process's monotonic clock, so they stay
consistent with each other in a replay.

Pitfalls handled: a recording is what users attach to bug reports, so no API key reaches it: the
objects hold none, and every line is scrubbed of the secrets the recorder was given besides (a
sweep arm's argv is redacted by `ArmSpec.saved`). Recordings are bounded: past `max_bytes` the
file is rotated to `FILE.1` (replacing an older one) and a new part starts with its own header, so
a watched session keeps at most twice `max_bytes` on disk and each part replays on its own. The
dashboard's handlers must not block on disk: lines are encoded by the caller and written by a
thread of the recorder's own.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.meters import MeterInfo, MeterReading
from collectors.redact import scrub
from collectors.requests.record import RequestRecord
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import events
from collectors.sweep.codec import to_json

RECORDING_SCHEMA = "spectop.recording/1"
MAX_RECORDING_BYTES = 64 * 1024 * 1024  # per part; one older part is kept beside it
_STOP = object()


def rotated_path(path: Path) -> Path:
    return path.with_name(path.name + ".1")


def header(
    server_url: str,
    meter: MeterInfo | None,
    title: str,
    t0_s: float,
    part: int = 1,
    wall0_unix_s: float | None = None,
) -> dict[str, Any]:
    wall0_unix_s = time.time() if wall0_unix_s is None else wall0_unix_s
    return {
        "schema": RECORDING_SCHEMA,
        "server_url": server_url,
        "title": title,
        "meter": asdict(meter) if meter else None,
        "t0_s": t0_s,
        "wall0_unix_s": round(wall0_unix_s, 3),
        "started": datetime.fromtimestamp(wall0_unix_s, timezone.utc).isoformat(timespec="seconds"),
        "part": part,
    }


def poll_form(snap: ServerSnapshot) -> dict[str, Any]:
    return {"kind": "poll", **json_forms.snapshot_dict(snap), "taken_at_s": snap.taken_at_s}


def meter_form(readings: Sequence[MeterReading], error: str | None) -> dict[str, Any]:
    return {
        "kind": "meter",
        "readings": [[r.t_s, r.energy_j, r.power_w, r.fault] for r in readings],
        "error": error,
    }


def request_form(record: RequestRecord) -> dict[str, Any]:
    body = asdict(record)
    body["events"] = [[e.t_s, e.n_tokens, e.step_key] for e in record.events]
    return body


def sweep_form(event: events.SweepEvent) -> dict[str, Any]:
    """A sweep event; a PointDone's records are left out (they are recorded as requests)."""
    if isinstance(event, events.SweepStarted):
        plan = event.plan
        body: dict[str, Any] = {
            "run_dir": str(event.run_dir),
            "plan": {"batches": list(plan.batches), "max_tokens": plan.max_tokens, "passes": plan.passes},
            "schedule": [asdict(k) for k in event.schedule],
            "arms": [arm.saved() for arm in event.arms],
        }
    elif isinstance(event, events.PointDone):
        body = {"index": event.index, "key": asdict(event.key), "row": to_json(event.row)}
    elif isinstance(event, events.PointsAdded):
        body = {"first_index": event.first_index, "keys": [asdict(k) for k in event.keys]}
    elif isinstance(event, events.SweepEnded):
        body = {**to_json(event), "run_dir": str(event.run_dir)}
    elif isinstance(event, (events.IdleMeasured, events.PointProgressed)):
        body = to_json(event)
    else:
        raise TypeError(f"not a sweep event: {event!r}")
    return {"kind": "sweep", "event": type(event).__name__, **body}


class Recorder:
    """Writes a recording; its methods encode on the caller's thread, a thread of its own writes."""

    def __init__(
        self,
        path: Path,
        *,
        server_url: str,
        meter: MeterInfo | None,
        title: str = "spectop",
        secrets: Iterable[str | None] = (),
        max_bytes: int = MAX_RECORDING_BYTES,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self.t0_s, wall0_unix_s = clock(), wall_clock()
        self._secrets = [s for s in secrets if s]
        self._max_bytes = max_bytes
        self._header = header(server_url, meter, title, self.t0_s, wall0_unix_s=wall0_unix_s)
        try:
            self._file = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            raise SpectopError(
                f"--record {self.path}: cannot write it ({exc.strerror})", "give a file in a writable folder"
            ) from None
        self._bytes = 0
        self._lines: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._write(self._line(self._header))
        self._thread = threading.Thread(target=self._writer, name="spectop-recorder", daemon=True)
        self._thread.start()

    # -- what the app records -----------------------------------------------------------------
    def poll(self, snap: ServerSnapshot) -> None:
        self._put(poll_form(snap))

    def meter(self, readings: Sequence[MeterReading], error: str | None = None) -> None:
        self._put(meter_form(readings, error))

    def requests(self, records: Iterable[RequestRecord]) -> None:
        forms = [request_form(r) for r in records]
        if forms:
            self._put({"kind": "requests", "records": forms})

    def sweep(self, event: events.SweepEvent) -> None:
        self._put(sweep_form(event))

    def close(self) -> None:
        """Write what is queued and close the file (idempotent)."""
        if self._thread.is_alive():
            self._lines.put(_STOP)
            self._thread.join()
        self._file.close()

    # -- writing --------------------------------------------------------------------------------
    def _put(self, body: dict[str, Any]) -> None:
        self._lines.put(self._line({"t": round(self._clock() - self.t0_s, 4), **body}))

    def _line(self, body: dict[str, Any]) -> str:
        text = json_forms.dumps(body, separators=(",", ":"), default=str)
        return scrub(text, self._secrets) if self._secrets else text

    def _writer(self) -> None:
        while (line := self._lines.get()) is not _STOP:
            assert isinstance(line, str)
            if self._bytes + len(line) + 1 > self._max_bytes and self._bytes:
                self._rotate()
            self._write(line)

    def _write(self, line: str) -> None:
        try:
            self._file.write(line + "\n")
            self._file.flush()  # a recording is read after a crash too
        except OSError:
            return  # a full disk loses lines, never the session
        self._bytes += len(line.encode()) + 1

    def _rotate(self) -> None:
        self._file.close()
        os.replace(self.path, rotated_path(self.path))
        self._file = self.path.open("w", encoding="utf-8")
        self._bytes = 0
        self._header = {**self._header, "part": self._header["part"] + 1}
        self._write(self._line(self._header))
