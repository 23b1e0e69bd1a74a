"""llama-server's requests and streams: its native /completion route and its OpenAI chunks' `timings`.

Asks for `timings_per_token`, so every event carries cumulative timings: exact token counts, and
`predicted_ms`, which every token of one verify step shares (the step key). `timings` give
committed and accepted tokens (steps = T − 1 − A; no `draft_n` means nothing was drafted).
Prompt-progress events carry a placeholder token, not output; a stop-word partial can carry
the last text together with `stop: true`.
"""

from __future__ import annotations

from typing import Any

from collectors.requests.spec import RequestSpec
from collectors.requests.stream_state import StreamState
from collectors.servers.shapes import INT, NUMBER, TEXT
from collectors.servers.wire import SSE, Body, ChunkExtension, DialectWire, EventReader, openai_body

# the fields read here and their kinds
TIMINGS = {
    "predicted_n": INT,
    "prompt_n": INT,
    "cache_n": INT,
    "draft_n": INT,
    "draft_n_accepted": INT,
    "predicted_ms": NUMBER,
}
COMPLETION_EVENT = {
    "timings": TIMINGS,
    "model": TEXT,
    "stop_type": TEXT,
    "tokens_predicted": INT,
    "tokens_evaluated": INT,
    "content": TEXT,
}


def request_body(spec: RequestSpec) -> Body:
    """/completion (or chat) with per-event cumulative timings, on the spec's slot if it names one."""
    path, body = openai_body(spec, continuous_usage=False)
    body["timings_per_token"] = True
    if spec.id_slot is not None:
        body["id_slot"] = spec.id_slot
    return path, body


def take_timings(state: StreamState, timings: dict[str, Any]) -> None:
    """A `timings` object's counts: committed tokens, prompt tokens, drafted and accepted."""
    if timings.get("predicted_n") is not None:
        state.committed_tokens = int(timings["predicted_n"])
        state.spec_reported = True  # the timings carry draft_n whenever it drafted
    if timings.get("prompt_n") is not None and state.prompt_tokens is None:
        state.prompt_tokens = int(timings["prompt_n"]) + int(timings.get("cache_n") or 0)
    if timings.get("draft_n") is not None:
        state.draft_n = int(timings["draft_n"])
        state.draft_n_accepted = int(timings.get("draft_n_accepted") or 0)


def step_key(timings: dict[str, Any] | None) -> float | None:
    """Every token of one verify step is stamped with the same `predicted_ms`."""
    return float(timings["predicted_ms"]) if timings and timings.get("predicted_ms") is not None else None


def feed_completion(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One event of the native /completion stream."""
    timings = payload.get("timings")
    if payload.get("stop"):
        state.done = True
        state.model = payload.get("model", state.model)
        state.finish_reason = payload.get("stop_type")
        if timings:
            take_timings(state, timings)
        if payload.get("tokens_predicted") is not None:
            state.committed_tokens = int(payload["tokens_predicted"])
        if payload.get("tokens_evaluated") is not None:
            state.prompt_tokens = int(payload["tokens_evaluated"])
        state.add_tokens(t_s, payload.get("tokens_predicted"), payload.get("content", ""), step_key(timings))
        return
    if "prompt_progress" in payload:
        return
    state.add_tokens(t_s, payload.get("tokens_predicted"), payload.get("content", ""), step_key(timings))


def _chunk_tokens(payload: dict[str, Any]) -> int | None:
    timings = payload.get("timings")
    return int(timings["predicted_n"]) if timings and timings.get("predicted_n") is not None else None


def _read_chunk_timings(state: StreamState, payload: dict[str, Any]) -> None:
    if payload.get("timings"):
        take_timings(state, payload["timings"])


COMPLETION_EVENTS = EventReader(SSE, COMPLETION_EVENT, feed_completion)
CHUNK_TIMINGS = ChunkExtension(
    {"timings": TIMINGS},
    _read_chunk_timings,
    cumulative=_chunk_tokens,
    step_key=lambda payload: step_key(payload.get("timings")),
)


class LlamaCppWire(DialectWire):
    """llama-server's routes: /completion (native, also /completions) and OpenAI chat with `timings`."""

    native_events = COMPLETION_EVENTS
    native_paths = ("/completion", "/completions")
    chunk_extension = CHUNK_TIMINGS

    @classmethod
    def request_body(cls, spec: RequestSpec) -> Body:
        return request_body(spec)
