"""SGLang's native `/generate` on the simulated SGLang, as 0.5.23 serves it.

Route and stream: `srt/entrypoints/http_server.py:928-990` (POST `/generate`; streamed as
`data: {json}\\n\\n` events then `data: [DONE]`, whole as the last event's object). Events:
`srt/managers/tokenizer_manager.py:2506-2560` (meta_info: id, finish_reason, prompt_tokens,
weight_version, num_retractions, reasoning_tokens, completion_tokens, cached_tokens) and
:2632-2656 (default, non-incremental stream: each event's `text` is the whole text so far,
`output_ids` every id so far). The finished event adds `e2e_latency` (:2753) and, on a drafting
server, the spec counts (:3138-3172): `spec_verify_ct` (one per decode step: the first token
comes from prefill), `spec_num_correct_drafts`, `spec_num_proposed_drafts` = verify_ct ×
(speculative_num_draft_tokens − 1), `spec_accept_rate` = correct / proposed and
`spec_accept_length` = completion_tokens / verify_ct. finish_reason: `{"type": "length",
"length": N}` or `{"type": "stop", "matched": id}` (`srt/managers/schedule_batch.py:284-330`).
Pitfalls handled: a verify step's tokens leave as one event (the engine's `more_in_step`);
`max_new_tokens` defaults to 128 as in SGLang's SamplingParams.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from collectors.simulator.engine import ContextExceeded
from collectors.simulator.tasks import Task, TaskResult, TokenEvent

if TYPE_CHECKING:
    from collectors.simulator.openai_http import OpenAIHandler

DEFAULT_MAX_NEW_TOKENS = 128
EOS_TOKEN_ID = 2


def serve_generate(handler: OpenAIHandler, body: dict[str, Any]) -> None:
    """Answer one POST /generate: submit to the handler's engine, stream or send the result."""
    engine = handler.server.engine
    params = body.get("sampling_params")
    params = params if isinstance(params, dict) else {}
    text = body.get("text")
    if not isinstance(text, str):
        handler.send_json(400, {"error": {"message": '"text" must be a string', "code": 400}})
        return
    max_new = params.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)
    if not isinstance(max_new, int) or isinstance(max_new, bool) or max_new < 0:
        max_new = DEFAULT_MAX_NEW_TOKENS
    temperature = params.get("temperature", 1.0)
    sample_seed = None if temperature == 0 else time.monotonic_ns()
    try:
        task = engine.submit(
            text,
            n_predict=max_new,
            ignore_eos=params.get("ignore_eos") is True,
            params={"stream": body.get("stream") is True, "max_new_tokens": max_new},
            sample_seed=sample_seed,
        )
    except ContextExceeded as exc:
        handler.send_json(400, {"error": {"message": str(exc), "code": 400}})
        return
    events = _Events(task, engine.profile.draft.n_max if engine.speculative else 0)
    if body.get("stream") is not True:
        result = handler._wait(task, lambda ev: isinstance(ev, TaskResult))  # noqa: SLF001 - shared helper
        if isinstance(result, TaskResult):
            handler.send_json(200, events.finished(result))
        else:
            handler.send_json(503, {"error": {"message": "server is shutting down", "code": 503}})
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        while True:
            ev = handler._wait(task, lambda _: True)  # noqa: SLF001
            if ev is None:
                handler.close_connection = True
                break
            if isinstance(ev, TokenEvent):
                events.take(ev)
                if not ev.more_in_step and ev.n_decoded < task.stop_at:
                    handler._write([events.step()])  # noqa: SLF001
                continue
            handler._write([events.finished(ev)], done=True)  # noqa: SLF001
            break
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True
        engine.cancel(task)


class _Events:
    """One request's events: the same id on each, text and ids cumulative."""

    def __init__(self, task: Task, n_draft: int) -> None:
        self._task = task
        self._n_draft = n_draft  # speculative_num_draft_tokens - 1; 0 on a plain server
        self._id = uuid.uuid4().hex
        self._t0 = time.monotonic()
        self._texts: list[str] = []
        self._ids: list[int] = []

    def take(self, ev: TokenEvent) -> None:
        self._texts.append(ev.text)
        self._ids.append(ev.token_id)

    def _meta(self, finish: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "id": self._id,
            "finish_reason": finish,
            "prompt_tokens": self._task.n_prompt,
            "weight_version": "default",
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": len(self._ids),
            "cached_tokens": self._task.n_cached,
        }

    def step(self) -> dict[str, Any]:
        return {"text": "".join(self._texts), "output_ids": list(self._ids), "meta_info": self._meta(None)}

    def finished(self, result: TaskResult) -> dict[str, Any]:
        if result.stop_type == "eos":
            finish: dict[str, Any] = {"type": "stop", "matched": EOS_TOKEN_ID}
        else:
            finish = {"type": "length", "length": result.n_decoded}
        meta = self._meta(finish)
        meta["completion_tokens"] = result.n_decoded
        meta["e2e_latency"] = time.monotonic() - self._t0
        verify_ct = result.n_decoded - 1 - result.timings.draft_n_accepted
        if self._n_draft and verify_ct > 0:
            proposed, correct = verify_ct * self._n_draft, result.timings.draft_n_accepted
            meta.update(
                spec_accept_rate=correct / proposed,
                spec_accept_length=result.n_decoded / verify_ct,
                spec_num_correct_drafts=correct,
                spec_num_proposed_drafts=proposed,
                spec_verify_ct=verify_ct,
            )
        return {"text": result.content, "output_ids": list(self._ids), "meta_info": meta}
