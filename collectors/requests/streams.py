"""Parse streamed responses (llama-server native and OpenAI-style SSE) into timed chunk events.

Pure: fed (arrival time, data payload) pairs, so tests replay captured streams exactly.
Pitfalls handled: a request's steps are taken from the server's own counts wherever it gives
them (`steps()`), never from event bursts, which split and merge under load: llama-server's
`timings` give committed and accepted tokens (steps = T − 1 − A; no `draft_n` means nothing was
drafted), SGLang's `spec_verify_ct` counts every verify pass (OpenAI routes' `sglext`: in 0.5.23, not 0.5.11;
native /generate's last `meta_info`: every release), and vLLM's `num_spec_steps` counts
only steps that drafted, so there too steps = T − 1 − A, never fewer than the drafted steps.
Server events are untrusted: an event that is not a JSON object, or whose counts or text are of
another type (`NATIVE_EVENT`, `OPENAI_CHUNK`), is a SpectopError, never a TypeError mid-stream;
a null count reads as absent, as OpenAI-style servers send `"usage": null` on most chunks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from collectors.energy import ledger
from collectors.errors import SpectopError
from collectors.http import NOT_A_SERVER
from collectors.requests.latency import ChunkEvent
from collectors.servers.shapes import INT, NUMBER, TEXT, ListOf, problem_of

# the fields read here and their kinds
TIMINGS = {
    "predicted_n": INT,
    "prompt_n": INT,
    "cache_n": INT,
    "draft_n": INT,
    "draft_n_accepted": INT,
    "predicted_ms": NUMBER,
}
# SGLang's native /generate `meta_info`; the spec counts come on the last event only, named
# per release (tokenizer_manager.py `_calculate_spec_decoding_metrics`: 0.5.4 spec_verify_ct
# alone, 0.5.10 spec_accept_token_num / spec_draft_token_num, 0.5.11 spec_accepted_drafts /
# spec_proposed_drafts, 0.5.23 spec_num_correct_drafts / spec_num_proposed_drafts at :3138-3172)
SGLANG_META = {
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
NATIVE_EVENT = {
    "timings": TIMINGS,
    "model": TEXT,
    "stop_type": TEXT,
    "tokens_predicted": INT,
    "tokens_evaluated": INT,
    "content": TEXT,
    "text": TEXT,
    "meta_info": SGLANG_META,
}
_DELTA = {"content": TEXT, "reasoning_content": TEXT}
OPENAI_CHUNK = {
    "model": TEXT,
    "timings": TIMINGS,
    "usage": {"completion_tokens": INT, "prompt_tokens": INT},
    "choices": ListOf({"delta": _DELTA, "message": _DELTA, "text": TEXT, "finish_reason": TEXT}),
    "metrics": {
        "speculative_decoding": {
            "num_draft_tokens": INT,
            "num_accepted_draft_tokens": INT,
            "num_spec_steps": INT,
        }
    },
    "sglext": {
        "spec_tokens_details": {
            "spec_num_proposed_drafts": INT,
            "spec_num_correct_drafts": INT,
            "spec_verify_ct": INT,
        }
    },
}


@dataclass
class StreamState:
    """What a stream has said so far; `final` fields arrive with the last events."""

    events: list[ChunkEvent] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    committed_tokens: int | None = None
    prompt_tokens: int | None = None
    draft_n: int | None = None
    draft_n_accepted: int | None = None
    spec_reported: bool = False  # the server reported this request's drafting (absent counts: none)
    verify_steps: int | None = None  # SGLang: verify passes, every decode step
    drafted_steps: int | None = None  # vLLM: steps that had draft tokens
    finish_reason: str | None = None
    model: str | None = None
    error: str | None = None
    done: bool = False
    tokens_per_event_exact: bool = True
    _cumulative: int = 0

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def text_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def steps(self) -> int | None:
        """Every decode step after the first token, from the server's counts; None without them."""
        if self.verify_steps is not None:
            return self.verify_steps
        if not self.spec_reported or self.committed_tokens is None:
            return None
        steps = ledger.every_step_count(self.committed_tokens, self.draft_n_accepted or 0, 1)
        return max(steps, self.drafted_steps or 0, 0)

    def add_tokens(self, t_s: float, cumulative: int | None, text: str, step_key: float | None) -> None:
        """Record an event from a cumulative token count when the server gives one, else one per text."""
        if cumulative is not None and self.tokens_per_event_exact:
            n_tokens = max(0, cumulative - self._cumulative)
            self._cumulative = max(self._cumulative, cumulative)
        elif cumulative is not None:
            n_tokens = 0  # a final usage count after uncounted chunks is not an event of its own
        else:
            n_tokens = 1 if text else 0
            if text:
                self.tokens_per_event_exact = False
        if text:
            self.text_parts.append(text)
        if n_tokens:
            self.events.append(ChunkEvent(t_s, n_tokens, step_key))

    def take_timings(self, timings: dict[str, Any]) -> None:
        if timings.get("predicted_n") is not None:
            self.committed_tokens = int(timings["predicted_n"])
            self.spec_reported = True  # llama-server's timings carry draft_n whenever it drafted
        if timings.get("prompt_n") is not None and self.prompt_tokens is None:
            self.prompt_tokens = int(timings["prompt_n"]) + int(timings.get("cache_n") or 0)
        if timings.get("draft_n") is not None:
            self.draft_n = int(timings["draft_n"])
            self.draft_n_accepted = int(timings.get("draft_n_accepted") or 0)


def _step_key(timings: dict[str, Any] | None) -> float | None:
    # llama-server stamps every token of one verify step with the same predicted_ms.
    return float(timings["predicted_ms"]) if timings and timings.get("predicted_ms") is not None else None


def feed_native(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One event of llama-server's native /completion stream, or of SGLang's /generate."""
    if "error" in payload:
        state.error = _error_text(payload["error"])
        state.done = True
        return
    if isinstance(payload.get("meta_info"), dict):
        feed_sglang_native(state, t_s, payload, payload["meta_info"])
        return
    timings = payload.get("timings")
    if payload.get("stop"):
        state.done = True
        state.model = payload.get("model", state.model)
        state.finish_reason = payload.get("stop_type")
        if timings:
            state.take_timings(timings)
        if payload.get("tokens_predicted") is not None:
            state.committed_tokens = int(payload["tokens_predicted"])
        if payload.get("tokens_evaluated") is not None:
            state.prompt_tokens = int(payload["tokens_evaluated"])
        # a stop-word partial can carry the last text together with stop=true
        state.add_tokens(t_s, payload.get("tokens_predicted"), payload.get("content", ""), _step_key(timings))
        return
    if "prompt_progress" in payload:
        return  # prompt progress events carry a placeholder token id, not output
    state.add_tokens(t_s, payload.get("tokens_predicted"), payload.get("content", ""), _step_key(timings))


def feed_openai(state: StreamState, t_s: float, payload: dict[str, Any]) -> None:
    """One chunk of an OpenAI-style stream (llama-server, vLLM, SGLang chat or completions)."""
    if "error" in payload:
        state.error = _error_text(payload["error"])
        state.done = True
        return
    state.model = payload.get("model", state.model)
    timings = payload.get("timings")
    usage = payload.get("usage") or {}
    cumulative = None
    if timings and timings.get("predicted_n") is not None:
        cumulative = int(timings["predicted_n"])
    elif usage.get("completion_tokens") is not None:
        cumulative = int(usage["completion_tokens"])
    text = ""
    for choice in payload.get("choices") or []:
        delta = choice.get("delta") or choice.get("message") or {}  # a non-streamed answer has "message"
        text += (
            (delta.get("content") or "") + (delta.get("reasoning_content") or "") + (choice.get("text") or "")
        )
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
    state.add_tokens(t_s, cumulative, text, _step_key(timings))
    if timings:
        state.take_timings(timings)
    if usage.get("completion_tokens") is not None:
        state.committed_tokens = int(usage["completion_tokens"])
        state.prompt_tokens = usage.get("prompt_tokens", state.prompt_tokens)
    _take_spec_details(state, payload)


def feed_sglang_native(state: StreamState, t_s: float, payload: dict[str, Any], meta: dict[str, Any]) -> None:
    """One event of SGLang's /generate stream: the text so far (or only the new text, with
    --incremental-streaming-output) and cumulative counts in `meta_info`, spec counts at the end."""
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


def _take_spec_details(state: StreamState, payload: dict[str, Any]) -> None:
    vllm = ((payload.get("metrics") or {}).get("speculative_decoding")) or None
    if isinstance(vllm, dict):
        state.spec_reported = True
        state.draft_n = int(vllm.get("num_draft_tokens") or 0)
        state.draft_n_accepted = int(vllm.get("num_accepted_draft_tokens") or 0)
        state.drafted_steps = int(vllm.get("num_spec_steps") or 0)
    sglang = ((payload.get("sglext") or {}).get("spec_tokens_details")) or None
    if isinstance(sglang, dict):
        state.spec_reported = True
        state.draft_n = int(sglang.get("spec_num_proposed_drafts") or 0)
        state.draft_n_accepted = int(sglang.get("spec_num_correct_drafts") or 0)
        state.verify_steps = int(sglang.get("spec_verify_ct") or 0)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def feed_line(state: StreamState, t_s: float, line: str, native: bool) -> None:
    """Feed one raw SSE line; comments, blank lines and `[DONE]` are handled here. Raises
    SpectopError ("streamed an event …", the caller names the endpoint) for an event of the
    wrong shape."""
    line = line.strip()
    if not line.startswith("data:"):
        return
    data = line[5:].strip()
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
    problem = problem_of(payload, NATIVE_EVENT if native else OPENAI_CHUNK)
    if problem is not None:
        raise SpectopError(f"streamed an event with {problem}", NOT_A_SERVER)
    (feed_native if native else feed_openai)(state, t_s, payload)
