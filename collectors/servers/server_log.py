"""Requests read from a server's own log (`--server-log`), for the dashboard and replays.

Only llama-server's log gives per-request drafting, so its dialect owns the reader
(collectors/servers/llamacpp/log_requests.py); the dashboard asks for it here, by what it does.
"""

from __future__ import annotations

from collectors.servers.llamacpp.log_requests import (
    OWN_MATCH_S,
    TAG,
    LogReader,
    LogRecords,
    TimedRequest,
    is_own,
    paced_events,
    to_record,
)

__all__ = [
    "OWN_MATCH_S",
    "TAG",
    "LogReader",
    "LogRecords",
    "TimedRequest",
    "is_own",
    "paced_events",
    "to_record",
]
