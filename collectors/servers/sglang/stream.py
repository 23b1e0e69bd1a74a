"""SGLang's requests and streams: the native /generate route and its OpenAI chunks' `sglext`.

The probe and the sweep use /generate, whose last event's `meta_info` has `spec_verify_ct` (every
verify pass, i.e. every decode step) on every release, and drafted/accepted counts named per
release (tokenizer_manager.py `_calculate_spec_decoding_metrics`: 0.5.4 spec_verify_ct alone,
0.5.10 spec_accept_token_num / spec_draft_token_num, 0.5.11 spec_accepted_drafts /
spec_proposed_drafts, 0.5.23 spec_num_correct_drafts / spec_num_proposed_drafts at :3138-3172).
On the chat route the client asks for `return_spec_tokens_details`: `sglext.spec_tokens_details`
(in 0.5.23, not in 0.5.11).
"""

from __future__ import annotations

from typing import Any

from collectors.requests.spec import RequestSpec
from collectors.requests.stream_state import StreamState
from collectors.servers.shapes import INT, TEXT
from collectors.servers.wire import SSE, Body, ChunkExtension, DialectWire, EventReader, openai_body

GENERATE_META = {
    "completion_tokens": INT,
    "prompt_tokens": INT,
    "finish_reason": {"type": TEXT},
    "spec_verify_ct": INT,
    "spec_accept_token_num": INT,
    "spec_draft_token_num": INT,
    "spec_accepted_drafts": INT,
    "spec_proposed_drafts": INT,
    "spec_num_correct_drafts": INT,
    "spec_num_proposed_drafts": INT,
}
GENERATE_EVENT = {"text": TEXT, "meta_info": GENERATE_META}
SPEC_DETAILS = {
    "spec_tokens_details": {
        "spec_num_proposed_drafts": INT,
        "spec_num_correct_drafts": INT,
        "spec_verify_ct": INT,
    }
}


def request_body(spec: RequestSpec) -> Body:
    """/generate on the completion route (exact verify passes per request, any release), else chat
    asking for the spec details."""
    if spec.route != "completion":
        path, body = openai_body(spec)
        body["return_spec_tokens_details"] = True
        return path, body
    params: dict[str, object] = {"max_new_tokens": spec.max_tokens, "temperature": spec.temperature}
    if spec.ignore_eos:
        params["ignore_eos"] = True
    return "/generate", {"text": spec.prompt, "sampling_params": params, "stream": True}


def feed_generate(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One event of the /generate stream: the text so far (or only the new text, with
    --incremental-streaming-output) and cumulative counts in `meta_info`, spec counts at the end."""
    meta = payload["meta_info"]
    text, seen = payload.get("text") or "", state.text
    state.add_tokens(
        t_s, meta.get("completion_tokens"), text[len(seen) :] if text.startswith(seen) else text, None
    )
    if meta.get("completion_tokens") is not None:
        state.committed_tokens = int(meta["completion_tokens"])
    if meta.get("prompt_tokens") is not None:
        state.prompt_tokens = int(meta["prompt_tokens"])
    if isinstance(meta.get("finish_reason"), dict):
        state.finish_reason = meta["finish_reason"].get("type")
    if meta.get("spec_verify_ct") is not None:
        state.spec_reported = True
        state.verify_steps = int(meta["spec_verify_ct"])
        drafted = _first_of(meta, "spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num")
        accepted = _first_of(meta, "spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num")
        if drafted is not None and accepted is not None:  # 0.5.4 sends neither count
            state.draft_n, state.draft_n_accepted = int(drafted), int(accepted)


def _first_of(meta: dict[str, Any], *names: str) -> Any:
    """The first of a count's names (newest release first) that the event carries."""
    return next((meta[name] for name in names if meta.get(name) is not None), None)


def read_spec_details(state: StreamState, payload: dict[str, Any]) -> None:
    details = ((payload.get("sglext") or {}).get("spec_tokens_details")) or None
    if isinstance(details, dict):
        state.spec_reported = True
        state.draft_n = int(details.get("spec_num_proposed_drafts") or 0)
        state.draft_n_accepted = int(details.get("spec_num_correct_drafts") or 0)
        state.verify_steps = int(details.get("spec_verify_ct") or 0)


GENERATE_EVENTS = EventReader(
    SSE, GENERATE_EVENT, feed_generate, claims=lambda payload: isinstance(payload.get("meta_info"), dict)
)
CHUNK_SPEC_DETAILS = ChunkExtension({"sglext": SPEC_DETAILS}, read_spec_details)


class SglangWire(DialectWire):
    """SGLang's routes: /generate (native) and OpenAI chat with `sglext`."""

    native_events = GENERATE_EVENTS
    native_paths = ("/generate",)
    chunk_extension = CHUNK_SPEC_DETAILS

    @classmethod
    def request_body(cls, spec: RequestSpec) -> Body:
        return request_body(spec)
