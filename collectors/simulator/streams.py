"""Response bodies of `/completion` and `/v1/chat/completions`, streamed (SSE events) or whole.

Streams follow llama-server: one event per committed token (`tokens` holds exactly one id),
native `/completion` partials carry `"id_slot": -1` and end with a `"stop": true` event holding
`generation_settings` and `timings`; chat streams open with a role-only chunk, end with a
`finish_reason` chunk, then a usage chunk when `stream_options.include_usage` is set (`timings`
ride on the last of these), then `data: [DONE]`.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping
from typing import Any

from collectors.simulator.dialect import BUILD_INFO, timings_json, usage_json
from collectors.simulator.tasks import TaskResult, TokenEvent

_ID_ALPHABET = string.ascii_letters + string.digits


class CompletionFormat:
    """Native `/completion` bodies."""

    done_marker = False

    def __init__(self, model: str, prompt: str, params: Mapping[str, Any], n_prompt: int) -> None:
        self._model = model
        self._prompt = prompt
        self._params = dict(params)
        self._n_prompt = n_prompt

    def partial(self, ev: TokenEvent) -> list[dict[str, Any]]:
        out: dict[str, Any] = {
            "index": 0,
            "content": ev.text,
            "tokens": [ev.token_id],
            "stop": False,
            "id_slot": -1,
            "tokens_predicted": ev.n_decoded,
            "tokens_evaluated": self._n_prompt,
        }
        if ev.timings is not None:
            out["timings"] = timings_json(ev.timings)
        return [out]

    def whole(self, r: TaskResult, content: str | None = None) -> dict[str, Any]:
        return {
            "index": 0,
            "content": r.content if content is None else content,
            "tokens": [],
            "id_slot": r.id_slot,
            "stop": True,
            "model": self._model,
            "tokens_predicted": r.n_decoded,
            "tokens_evaluated": r.n_prompt,
            "generation_settings": self._params,
            "prompt": self._prompt,
            "has_new_line": r.has_new_line,
            "truncated": False,
            "stop_type": r.stop_type,
            "stopping_word": "",
            "tokens_cached": r.tokens_cached,
            "timings": timings_json(r.timings),
        }

    def final(self, r: TaskResult) -> list[dict[str, Any]]:
        return [self.whole(r, content="")]


class ChatFormat:
    """OpenAI-compatible `/v1/chat/completions` bodies."""

    done_marker = True

    def __init__(self, model: str, created: int, include_usage: bool) -> None:
        self._model = model
        self._created = created
        self._include_usage = include_usage
        self._id = "chatcmpl-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(32))

    def _chunk(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "choices": choices,
            "created": self._created,
            "id": self._id,
            "model": self._model,
            "system_fingerprint": BUILD_INFO,
            "object": "chat.completion.chunk",
        }
        out.update(extra)
        return out

    def partial(self, ev: TokenEvent) -> list[dict[str, Any]]:
        chunks = []
        if ev.n_decoded == 1:
            role = {"role": "assistant", "content": None}
            chunks.append(self._chunk([{"finish_reason": None, "index": 0, "delta": role}]))
        extra = {"timings": timings_json(ev.timings)} if ev.timings is not None else {}
        delta = {"content": ev.text}
        chunks.append(self._chunk([{"finish_reason": None, "index": 0, "delta": delta}], **extra))
        return chunks

    def final(self, r: TaskResult) -> list[dict[str, Any]]:
        finish = {"finish_reason": _finish_reason(r), "index": 0, "delta": {}}
        timings = timings_json(r.timings)
        if not self._include_usage:
            return [self._chunk([finish], timings=timings)]
        return [self._chunk([finish]), self._chunk([], usage=usage_json(r), timings=timings)]

    def whole(self, r: TaskResult) -> dict[str, Any]:
        message = {"role": "assistant", "content": r.content}
        return {
            "choices": [{"finish_reason": _finish_reason(r), "index": 0, "message": message}],
            "created": self._created,
            "model": self._model,
            "system_fingerprint": BUILD_INFO,
            "object": "chat.completion",
            "usage": usage_json(r),
            "id": self._id,
            "timings": timings_json(r.timings),
        }


def _finish_reason(r: TaskResult) -> str:
    return "stop" if r.stop_type == "eos" else "length"
