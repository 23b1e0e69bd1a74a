"""Messages workers post to the App; handlers on the UI thread own all state."""

from __future__ import annotations

from textual.message import Message

from collectors.meters import MeterReading
from collectors.requests.record import RequestRecord
from collectors.servers.server_log import TimedRequest
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.events import SweepEvent


class ServerPolled(Message):
    """A server poll finished (successfully or not: see `snapshot.status`); `server` is its number;
    `meter`: its meter's readings up to the poll's mark, when the poll hands them over."""

    def __init__(self, snapshot: ServerSnapshot, server: int = 0, meter: MeterRead | None = None) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.server = server
        self.meter = meter


class MeterRead(Message):
    """New meter readings since the last message (or the meter's failure), for server number `server`."""

    def __init__(self, readings: list[MeterReading], error: str | None = None, server: int = 0) -> None:
        super().__init__()
        self.readings = readings
        self.error = error
        self.server = server


class ProbeFinished(Message):
    """A probe request completed, or failed with `error`."""

    def __init__(self, record: RequestRecord | None, error: str | None = None) -> None:
        super().__init__()
        self.record = record
        self.error = error


class SweepProgressed(Message):
    """One event of the sweep engine, in order."""

    def __init__(self, event: SweepEvent) -> None:
        super().__init__()
        self.event = event


class LogRequestsRead(Message):
    """Requests the server's log reported finished (collectors/servers/llamacpp/log_requests.py)."""

    def __init__(self, requests: list[TimedRequest]) -> None:
        super().__init__()
        self.requests = requests


class LogReaderState(Message):
    """How the server log's reader stands: reading (with what it skipped), or why it cannot."""

    def __init__(self, text: str, problem: bool = False) -> None:
        super().__init__()
        self.text, self.problem = text, problem


class ProxyRequestRecorded(Message):
    """A request through the capture proxy finished (collectors/requests/proxy.py); posted from its thread."""

    def __init__(self, record: RequestRecord) -> None:
        super().__init__()
        self.record = record
