"""How a dialect talks to its server: the request body per route, and how its stream reads.

Every dialect inherits `DialectWire`'s defaults, an OpenAI-compatible server's: POST
/v1/chat/completions (or /completion) asking for usage on every chunk, answered with SSE `data:`
lines of OpenAI chunks. A dialect overrides `request_body` for its own routes and fields, sets
`native_events` for its native route's events (SSE or NDJSON), and `chunk_extension` for what it
adds to an OpenAI chunk. The registry composes them: an OpenAI-style stream is read with every
dialect's extension, so the capture proxy, which may not know the server, reads it the same way.
Server events are untrusted: each reader declares its fields' kinds (`shape`), checked before
`feed` sees an event; a null count reads as absent, as OpenAI-style servers send `"usage": null`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from collectors.requests.spec import RequestSpec
from collectors.requests.stream_state import StreamState
from collectors.servers.shapes import INT, TEXT, ListOf

SSE = "sse"  # `data: {...}` lines, blank lines between events, `data: [DONE]` at the end
NDJSON = "ndjson"  # one JSON object per line
Feed = Callable[[StreamState, float, dict[str, Any]], None]
Body = tuple[str, dict[str, object]]


def _nothing(payload: dict[str, Any]) -> None:
    return None


@dataclass(frozen=True, slots=True)
class EventReader:
    """How one route's stream reads: its framing, the fields its events may carry, each event's meaning.

    `claims` says which events are its own where several dialects' readers share a route (the
    proxy's native routes); None: those no other reader claims."""

    framing: str
    shape: Mapping[str, Any]
    feed: Feed
    claims: Callable[[dict[str, Any]], bool] | None = None


@dataclass(frozen=True, slots=True)
class ChunkExtension:
    """What a dialect adds to an OpenAI-style chunk: its fields' kinds and how to read them.

    `cumulative` is the tokens so far where the dialect counts them better than `usage`;
    `step_key` a value shared by the events of one verify step; `read` takes the rest."""

    shape: Mapping[str, Any]
    read: Callable[[StreamState, dict[str, Any]], None]
    cumulative: Callable[[dict[str, Any]], int | None] = field(default=_nothing)
    step_key: Callable[[dict[str, Any]], float | None] = field(default=_nothing)


_DELTA = {"content": TEXT, "reasoning_content": TEXT}
OPENAI_CHUNK = {
    "model": TEXT,
    "usage": {"completion_tokens": INT, "prompt_tokens": INT},
    "choices": ListOf({"delta": _DELTA, "message": _DELTA, "text": TEXT, "finish_reason": TEXT}),
}


def openai_body(spec: RequestSpec, continuous_usage: bool = True) -> Body:
    """The path and body of an OpenAI-style chat request (or a plain /completion one), streamed,
    asking for usage with the chunks (cumulative, on every chunk, with `continuous_usage`)."""
    body: dict[str, object]
    if spec.route == "completion":
        body, path = {"prompt": spec.prompt, "n_predict": spec.max_tokens}, "/completion"
    else:
        body = {
            "messages": [{"role": "user", "content": spec.prompt}],
            "max_tokens": spec.max_tokens,
            "stream_options": {"include_usage": True, "continuous_usage_stats": continuous_usage},
        }
        path = "/v1/chat/completions"
        if spec.model:
            body["model"] = spec.model
    body.update({"stream": True, "temperature": spec.temperature})
    if spec.ignore_eos:
        body["ignore_eos"] = True
    return path, body


def feed_chunk(
    state: StreamState, t_s: float, payload: dict[str, Any], extensions: Sequence[ChunkExtension] = ()
) -> None:
    """One chunk of an OpenAI-style stream, with what each of `extensions` adds to it."""
    if "error" in payload:
        state.fail(payload["error"])
        return
    state.model = payload.get("model", state.model)
    usage = payload.get("usage") or {}
    cumulative = next((n for e in extensions if (n := e.cumulative(payload)) is not None), None)
    if cumulative is None and usage.get("completion_tokens") is not None:
        cumulative = int(usage["completion_tokens"])
    text = ""
    for choice in payload.get("choices") or []:
        delta = choice.get("delta") or choice.get("message") or {}  # a non-streamed answer has "message"
        text += (
            (delta.get("content") or "") + (delta.get("reasoning_content") or "") + (choice.get("text") or "")
        )
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
    step_key = next((k for e in extensions if (k := e.step_key(payload)) is not None), None)
    state.add_tokens(t_s, cumulative, text, step_key)
    for extension in extensions:
        extension.read(state, payload)
    if usage.get("completion_tokens") is not None:
        state.committed_tokens = int(usage["completion_tokens"])
        state.prompt_tokens = usage.get("prompt_tokens", state.prompt_tokens)


def chunk_reader(extensions: Sequence[ChunkExtension]) -> EventReader:
    """The reader of OpenAI-style SSE chunks that carry any of `extensions`' fields."""
    shape: dict[str, Any] = dict(OPENAI_CHUNK)
    for extension in extensions:
        shape.update(extension.shape)
    return EventReader(SSE, shape, partial(feed_chunk, extensions=tuple(extensions)))


def native_reader(readers: Sequence[EventReader]) -> EventReader:
    """One SSE reader for the native routes of several dialects: each event goes to the reader
    that claims it, else to the first that claims nothing in particular."""
    readers = [r for r in readers if r.framing == SSE]
    shape: dict[str, Any] = {}
    for reader in readers:
        shape.update(reader.shape)

    def feed(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
        if "error" in payload:
            state.fail(payload["error"])
            return
        claimed = next((r for r in readers if r.claims is not None and r.claims(payload)), None)
        fallback = next((r for r in readers if r.claims is None), None)
        if (reader := claimed or fallback) is not None:
            reader.feed(state, t_s, payload)

    return EventReader(SSE, shape, feed)


class DialectWire:
    """A dialect's requests and streams; the defaults are an OpenAI-compatible server's."""

    native_events: ClassVar[EventReader | None] = None  # its "completion" route's events
    native_paths: ClassVar[tuple[str, ...]] = ()  # that route's paths, for the capture proxy
    chunk_extension: ClassVar[ChunkExtension | None] = None  # what it adds to OpenAI chunks

    @classmethod
    def request_body(cls, spec: RequestSpec) -> Body:
        """The path and JSON body that ask this server for `spec`, streamed."""
        return openai_body(spec)
