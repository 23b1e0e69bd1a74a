"""The OpenAI-compatible front that vLLM and SGLang share: `/v1/completions` and
`/v1/chat/completions`, streamed (SSE) or whole, over the same `Engine` as llama-server.

Pitfalls handled: these servers send one chunk per engine step per request, so a verify step's
accepted drafts and its own token leave as one chunk (the engine marks a burst with
`TokenEvent.more_in_step`), never one event per token as llama-server does; the first chunk
carries only the assistant role; `stream_options.continuous_usage_stats` puts the cumulative
`usage` on every chunk, `include_usage` adds a last chunk with empty `choices`; then `[DONE]`.
Shapes: vLLM `entrypoints/openai/chat_completion/protocol.py:168-200` (0.33) and SGLang
`entrypoints/openai/protocol.py`, `serving_chat.py:931-1016` (0.5.23).
"""

from __future__ import annotations

import json
import queue
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from collectors.simulator import dialect
from collectors.simulator.engine import ContextExceeded, Engine
from collectors.simulator.loopback import LoopbackServer
from collectors.simulator.tasks import Task, TaskResult, TokenEvent

MAX_BODY_BYTES = 4 << 20


class OpenAIServer(LoopbackServer):
    """One arm: an `Engine` behind an OpenAI-compatible server's routes; subclasses add the rest."""

    owned_by = "openai"

    def __init__(self, address: tuple[str, int], engine: Engine, handler: type[OpenAIHandler]) -> None:
        super().__init__(address, handler)
        self.engine = engine
        self.created = int(time.time())

    def chunk_id(self) -> str:
        return f"chatcmpl-{uuid.uuid4().hex}"

    def choice_extra(self) -> dict[str, Any]:
        """Fields every streamed choice carries besides index, delta and finish_reason."""
        return {"logprobs": None}

    def request_metrics(self, task: Task) -> dict[str, Any] | None:
        """A finished request's `metrics` for its last usage chunk (vLLM's per-request figures)."""
        return None


def json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class OpenAIHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each step's chunk leaves at once
    server_version = "uvicorn"
    sys_version = ""
    server: OpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def send_body(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, obj: Any) -> None:
        self.send_body(status, json_bytes(obj), "application/json")

    def not_found(self) -> None:
        self.send_json(404, {"detail": "Not Found"})

    def bad_request(self, message: str) -> None:
        self.send_json(
            400, {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}
        )

    def get_route(self, path: str, query: dict[str, list[str]]) -> bool:
        """Answer a dialect's GET route; False when `path` is not one."""
        return False

    def do_GET(self) -> None:  # noqa: N802 - stdlib hook
        url = urlsplit(self.path)
        if not self.get_route(url.path, parse_qs(url.query)):
            self.not_found()

    def do_POST(self) -> None:  # noqa: N802 - stdlib hook
        path = urlsplit(self.path).path
        if path not in ("/v1/completions", "/v1/chat/completions"):
            self.not_found()
            return
        body = self._read_json()
        if body is None:
            return
        chat = path.endswith("chat/completions")
        try:
            prompt = dialect.chat_prompt(body.get("messages")) if chat else _prompt_text(body)
            task = self._submit(body, prompt)
        except ContextExceeded as exc:
            self.bad_request(str(exc))
            return
        except ValueError as exc:
            self.bad_request(str(exc))
            return
        raw_options = body.get("stream_options")
        options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}
        fmt = _Format(self.server, chat, task.n_prompt, bool(options.get("continuous_usage_stats")))
        if body.get("stream") is True:
            self._stream(task, fmt, bool(options.get("include_usage")))
            return
        result = self._wait(task, lambda ev: isinstance(ev, TaskResult))
        if not isinstance(result, TaskResult):
            self.send_json(503, {"error": {"message": "server is shutting down", "code": 503}})
        else:
            self.send_json(200, fmt.whole(result))

    def _read_json(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            self.bad_request("request body missing or too large")
            return None
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.bad_request(f"invalid JSON body: {exc}")
            return None
        if not isinstance(body, dict):
            self.bad_request("the request body must be a JSON object")
            return None
        return body

    def _submit(self, body: dict[str, Any], prompt: str) -> Task:
        n_predict = -1
        for key in ("max_completion_tokens", "max_tokens"):
            value = body.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                n_predict = value
                break
        temperature, seed = body.get("temperature"), body.get("seed")
        sample_seed = None
        if not (isinstance(temperature, (int, float)) and temperature == 0):
            sample_seed = seed if isinstance(seed, int) else time.monotonic_ns()
        return self.server.engine.submit(
            prompt,
            n_predict=n_predict,
            ignore_eos=body.get("ignore_eos") is True,
            params={"stream": body.get("stream") is True, "max_tokens": n_predict},
            sample_seed=sample_seed,
        )

    def _wait(self, task: Task, done: Any) -> TokenEvent | TaskResult | None:
        while True:
            try:
                ev = task.out.get(timeout=0.25)
            except queue.Empty:
                if self.server.engine.stopped:
                    return None
                continue
            if ev is None or done(ev):
                return ev

    def _stream(self, task: Task, fmt: _Format, include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self._write([fmt.role_chunk()])
            texts: list[str] = []
            while True:
                ev = self._wait(task, lambda _: True)
                if ev is None:
                    self.close_connection = True
                    break
                if isinstance(ev, TokenEvent):
                    texts.append(ev.text)
                    if not ev.more_in_step and ev.n_decoded < task.stop_at:
                        self._write([fmt.step_chunk("".join(texts), ev.n_decoded, None)])
                        texts = []
                    continue
                chunks = [fmt.step_chunk("".join(texts), ev.n_decoded, _finish_reason(ev))]
                if include_usage:
                    chunks.append(fmt.usage_chunk(ev.n_decoded, self.server.request_metrics(task)))
                self._write(chunks, done=True)
                break
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.server.engine.cancel(task)

    def _write(self, objs: list[dict[str, Any]], done: bool = False) -> None:
        data = b"".join(b"data: " + json_bytes(o) + b"\n\n" for o in objs)
        if done:
            data += b"data: [DONE]\n\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


class _Format:
    """One response's chunks: the same id and `created` on each."""

    def __init__(self, server: OpenAIServer, chat: bool, n_prompt: int, continuous_usage: bool) -> None:
        self._server = server
        self._chat = chat
        self._n_prompt = n_prompt
        self._continuous = continuous_usage
        self._id = server.chunk_id() if chat else server.chunk_id().replace("chatcmpl-", "cmpl-")
        self._created = int(time.time())
        self._model = server.engine.profile.model_alias

    def usage(self, n_decoded: int) -> dict[str, int]:
        return {
            "prompt_tokens": self._n_prompt,
            "total_tokens": self._n_prompt + n_decoded,
            "completion_tokens": n_decoded,
        }

    def _chunk(self, choices: list[dict[str, Any]], n_decoded: int | None) -> dict[str, Any]:
        kind = "chat.completion.chunk" if self._chat else "text_completion"
        out: dict[str, Any] = {"id": self._id, "object": kind, "created": self._created, "model": self._model}
        out["choices"] = choices
        if self._continuous and n_decoded is not None:
            out["usage"] = self.usage(n_decoded)
        return out

    def role_chunk(self) -> dict[str, Any]:
        if not self._chat:
            return self.step_chunk("", 0, None)
        delta = {"role": "assistant", "content": ""}
        return self._chunk(
            [{"index": 0, "delta": delta, **self._server.choice_extra(), "finish_reason": None}], 0
        )

    def step_chunk(self, text: str, n_decoded: int, finish: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"delta": {"content": text}} if self._chat else {"text": text}
        choice = {"index": 0, **body, **self._server.choice_extra(), "finish_reason": finish}
        if finish is not None:
            choice["stop_reason"] = None
        return self._chunk([choice], n_decoded)

    def usage_chunk(self, n_decoded: int, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
        out = self._chunk([], None)
        out["usage"] = self.usage(n_decoded)
        if metrics is not None:
            out["metrics"] = metrics
        return out

    def whole(self, r: TaskResult) -> dict[str, Any]:
        body: dict[str, Any] = (
            {"message": {"role": "assistant", "content": r.content}} if self._chat else {"text": r.content}
        )
        choice = {
            "index": 0,
            **body,
            "logprobs": None,
            "finish_reason": _finish_reason(r),
            "stop_reason": None,
        }
        kind = "chat.completion" if self._chat else "text_completion"
        out = {
            "id": self._id,
            "object": kind,
            "created": self._created,
            "model": self._model,
            "choices": [choice],
        }
        out["usage"] = self.usage(r.n_decoded)
        return out


def _finish_reason(r: TaskResult) -> str:
    return "stop" if r.stop_type == "eos" else "length"


def _prompt_text(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise ValueError('"prompt" must be a string')
    return prompt
