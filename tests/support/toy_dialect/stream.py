"""The toy dialect's requests and stream: POST /api/generate, answered with NDJSON.

One object a line: `{"response": "…", "done": false}` per token (one token each, so an event's
tokens are exact), then `{"done": true, "eval_count": N, "prompt_eval_count": P,
"draft_tokens": D, "accepted_tokens": A}`; an error is `{"error": "…"}` on a line of its own.
"""

from __future__ import annotations

from typing import Any

from collectors.requests.spec import RequestSpec
from collectors.requests.stream_state import StreamState
from collectors.servers.shapes import INT, TEXT
from collectors.servers.wire import NDJSON, Body, DialectWire, EventReader

GENERATE_EVENT = {
    "model": TEXT,
    "response": TEXT,
    "done_reason": TEXT,
    "eval_count": INT,
    "prompt_eval_count": INT,
    "draft_tokens": INT,
    "accepted_tokens": INT,
}


def request_body(spec: RequestSpec) -> Body:
    options: dict[str, object] = {"num_predict": spec.max_tokens, "temperature": spec.temperature}
    return "/api/generate", {
        "model": spec.model or "toy",
        "prompt": spec.prompt,
        "stream": True,
        "options": options,
    }


def feed_generate(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One line of the /api/generate stream."""
    state.model = payload.get("model", state.model)
    text = payload.get("response") or ""
    so_far = sum(event.n_tokens for event in state.events)
    state.add_tokens(t_s, so_far + 1 if text else None, text, None)
    if not payload.get("done"):
        return
    state.done = True
    state.finish_reason = payload.get("done_reason")
    if payload.get("eval_count") is not None:
        state.committed_tokens = int(payload["eval_count"])
    if payload.get("prompt_eval_count") is not None:
        state.prompt_tokens = int(payload["prompt_eval_count"])
    if payload.get("draft_tokens") is not None:
        state.spec_reported = True
        state.draft_n = int(payload["draft_tokens"])
        state.draft_n_accepted = int(payload.get("accepted_tokens") or 0)


class ToyWire(DialectWire):
    native_events = EventReader(NDJSON, GENERATE_EVENT, feed_generate)
    native_paths = ("/api/generate",)

    @classmethod
    def request_body(cls, spec: RequestSpec) -> Body:
        return request_body(spec)
