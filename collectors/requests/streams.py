"""Read a streamed answer's lines into timed chunk events, whatever the server's dialect.

Pure: fed (arrival time, line) pairs, so tests replay captured streams exactly. The framing
(SSE `data:` lines or NDJSON, one object a line) and each event's meaning come from an
`EventReader` that a dialect owns (collectors/servers/wire.py, the dialects' `stream.py`); the
registry gives the reader for a request, or for a captured stream whose server is not known.
Server events are untrusted: an event that is not a JSON object, or whose counts or text are of
another type than its reader's `shape` says, is a SpectopError, never a TypeError mid-stream.
"""

from __future__ import annotations

import json
from typing import Any

from collectors.errors import SpectopError
from collectors.http import NOT_A_SERVER
from collectors.requests.stream_state import StreamState
from collectors.servers import registry
from collectors.servers.shapes import problem_of
from collectors.servers.wire import NDJSON, EventReader

__all__ = ["NATIVE_EVENT", "OPENAI_CHUNK", "StreamState", "event_data", "feed_event_line", "feed_line"]

# every built-in dialect's native events, and OpenAI chunks with every extension: what the
# property tests generate events from
NATIVE_EVENT = registry.any_native_reader().shape
OPENAI_CHUNK = registry.any_chunk_reader().shape


def event_data(line: str, framing: str) -> str | None:
    """The JSON text a line carries under `framing`; None for a line that carries no event
    (an SSE comment, `event:` line or blank line; a blank NDJSON line)."""
    line = line.strip()
    if framing == NDJSON:
        return line or None
    return line[5:].strip() if line.startswith("data:") else None


def feed_event_line(state: StreamState, t_s: float, line: str, reader: EventReader) -> None:
    """Feed one raw line; comments, blank lines and `[DONE]` are handled here. Raises
    SpectopError ("streamed an event …", the caller names the endpoint) for an event of the
    wrong shape."""
    data = event_data(line, reader.framing)
    if data is None:
        return
    if data == "[DONE]":
        state.done = True
        return
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested too deep for the decoder
        state.error = f"server sent a line that is not JSON: {data[:80]!r}"
        return
    if payload is None:
        return
    if not isinstance(payload, dict):
        raise SpectopError(f"streamed an event that is not a JSON object: {data[:80]!r}", NOT_A_SERVER)
    problem = problem_of(payload, reader.shape)
    if problem is not None:
        raise SpectopError(f"streamed an event with {problem}", NOT_A_SERVER)
    if "error" in payload:
        state.fail(payload["error"])
        return
    reader.feed(state, t_s, payload)


def feed_line(state: StreamState, t_s: float, line: str, native: bool) -> None:
    """One SSE line of a stream from a server not known: a native route's events (`native`), else
    OpenAI-style chunks, each read by the dialect whose fields it carries."""
    reader = registry.any_native_reader() if native else registry.any_chunk_reader()
    feed_event_line(state, t_s, line, reader)


def feed_native(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One event of any dialect's native route (an already parsed payload)."""
    registry.any_native_reader().feed(state, t_s, payload)


def feed_openai(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One OpenAI-style chunk (an already parsed payload), with every dialect's extensions."""
    registry.any_chunk_reader().feed(state, t_s, payload)
