"""What the capture proxy keeps of one forwarded request: a `RequestRecord` (tag "proxy").

The proxy sees the bytes a client sees, so a record is built exactly as spectop's own client
builds one (collectors/requests/client.py `record_of`, fed by collectors/requests/streams.py), and its figures have
the same definitions: committed tokens and drafted/accepted from the final events, each read by
the dialect whose fields they carry (collectors/servers/registry.py `any_native_reader`,
`any_chunk_reader`), TTFT and gap tails from the chunks' arrival times.

Pitfalls handled: the proxy never learns the API key: only the route, the body's `model`, the
response and its timing go into a record, never a header. Chunks are split into lines here, push
style (a chunk may end mid-line, mid-UTF-8 character); what is recorded is bounded (`MAX_BYTES`), and
past it or at an event of the wrong shape recording stops with an error on the record while
forwarding goes on, since a proxy's bookkeeping must never break a client's request. A body that
is compressed (`Content-Encoding`) is forwarded as is and recorded without its figures.
Only generation routes are recorded; polls and pages pass through unrecorded.
"""

from __future__ import annotations

import codecs
import dataclasses
import itertools
import json
from collections.abc import Sequence

from collectors.errors import SpectopError
from collectors.requests import streams
from collectors.requests.client import record_of
from collectors.requests.record import RequestRecord, busy_figures
from collectors.servers import registry
from collectors.servers.wire import NDJSON

TAG = "proxy"
MAX_BYTES = 64 << 20  # recorded of one answer; past it the record says so and forwarding goes on
OPENAI_ROUTES = frozenset({"/v1/completions", "/v1/chat/completions", "/chat/completions"})
_ids = itertools.count(1)


def recorded_route(method: str, path: str) -> bool:
    """A request whose answer is a generation the Requests tab shows."""
    return method == "POST" and (path in registry.native_paths() or path in OPENAI_ROUTES)


class Capture:
    """One request's answer as it passes: `chunk` each piece on arrival, then `record`."""

    def __init__(self, server_url: str, path: str, t_send_s: float, request_body: bytes) -> None:
        self.server_url, self.path, self.t_send_s = server_url, path, t_send_s
        self.tag = TAG  # routed: `proxy:draft:3` (collectors/requests/router.py `Choice.tag`)
        self.native = path in registry.native_paths()  # a dialect's own route, not OpenAI's
        self.reader = registry.path_reader(path)
        self.state = streams.StreamState(model=_model_of(request_body))
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []
        self._bytes = 0
        self._stream = False
        self._reading = True  # False once recording stopped: forwarding goes on regardless
        self._error: str | None = None
        self._t_last_s = t_send_s

    def asked(self, request_body: bytes) -> None:
        """The request as sent (or its first part): the `model` it asked for, unless already known."""
        if self.state.model is None:
            self.state.model = _model_of(request_body)

    def start(self, status: int, content_type: str, content_encoding: str) -> None:
        """The answer's head: a stream, one JSON body, or something not recorded."""
        if status != 200:
            self._stop(f"answered HTTP {status}")
        elif content_encoding not in ("", "identity"):
            self._stop(f"answer compressed ({content_encoding}): not read")
        self._stream = content_type.startswith("text/event-stream") or "ndjson" in content_type

    def chunk(self, t_s: float, data: bytes) -> None:
        """A piece of the body, `t_s` when it arrived (stamped before it was forwarded)."""
        if not self._reading:
            return
        self._bytes += len(data)
        if self._bytes > MAX_BYTES:
            self._stop(f"answer longer than {MAX_BYTES >> 20} MB: recording stopped")
            return
        self._t_last_s = t_s
        text = self._decoder.decode(data)
        if not self._stream:
            self._pending.append(text)  # one JSON body, read whole at the end
            return
        first, *rest = text.split("\n")
        self._pending.append(first)  # the line so far, in pieces: a long line is not copied per chunk
        for piece in rest:
            self._line(t_s, "".join(self._pending).rstrip("\r"))
            self._pending = [piece]

    def record(self, t_done_s: float, error: str | None = None) -> RequestRecord:
        """The request as a record; `error` when the exchange broke (client gone, server hung up)."""
        if self._reading and self._pending:
            tail = "".join(self._pending) + self._decoder.decode(b"", final=True)
            self._pending = []
            if self._stream:
                self._line(self._t_last_s, tail.rstrip("\r"))
            else:
                self._body(self._t_last_s, tail)
        state = self.state
        if error or self._error:
            state.error = error or self._error
        elif not self._stream and state.committed_tokens is not None:
            state.done = True  # one JSON answer: complete once read
        return record_of(
            state, f"p{next(_ids)}", self.server_url, self.path, self.t_send_s, t_done_s, [], self.tag
        )

    def _line(self, t_s: float, line: str) -> None:
        try:
            streams.feed_event_line(self.state, t_s, line, self.reader)
        except SpectopError as exc:
            self._stop(f"streamed an event it could not read: {exc.what}")

    def _body(self, t_s: float, text: str) -> None:
        """A non-streamed answer: one JSON object, the same fields as a stream's last event."""
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):
            self._stop("answer is not JSON")
            return
        if not isinstance(payload, dict):
            self._stop("answer is not a JSON object")
            return
        # a native answer is the stream's last event, stop and all
        event = json.dumps({**payload, "stop": True} if self.native else payload)
        self._line(t_s, event if self.reader.framing == NDJSON else "data: " + event)

    def _stop(self, error: str) -> None:
        self._reading, self._error = False, error


def _model_of(body: bytes) -> str | None:
    """The `model` a request asked for; the answer's own `model`, when it names one, wins."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    model = payload.get("model") if isinstance(payload, dict) else None
    return model if isinstance(model, str) else None


def with_busy(record: RequestRecord, busy_samples: Sequence[int]) -> RequestRecord:
    """The record with the server's busy slots polled while it ran (as log rows get theirs)."""
    concurrency_mean, concurrency_max = busy_figures(busy_samples)
    if concurrency_mean is None:
        return record
    return dataclasses.replace(record, concurrency_mean=concurrency_mean, concurrency_max=concurrency_max)
