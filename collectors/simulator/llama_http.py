"""HTTP front of one simulated llama-server arm (stdlib threads, HTTP/1.1, chunked SSE)."""

from __future__ import annotations

import json
import queue
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from collectors.simulator import dialect
from collectors.simulator.engine import ContextExceeded, Engine
from collectors.simulator.loopback import LoopbackServer
from collectors.simulator.prom import llama_metrics_text
from collectors.simulator.streams import ChatFormat, CompletionFormat
from collectors.simulator.tasks import Task, TaskResult, TokenEvent

MAX_BODY_BYTES = 4 << 20


class LlamaServer(LoopbackServer):
    """One arm: an `Engine` behind llama-server's routes."""

    def __init__(self, address: tuple[str, int], engine: Engine) -> None:
        super().__init__(address, _Handler)
        self.engine = engine
        self.created = int(time.time())


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _error(code: int, message: str, kind: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "type": kind}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # a verify step's burst must leave as separate, immediate events
    server_version = "llama.cpp"
    sys_version = ""
    server: LlamaServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    # -- plumbing -------------------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, _json_bytes(obj), "application/json; charset=utf-8")

    def _not_found(self) -> None:
        self._send_json(404, {"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}})

    def _read_json(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            self._send_json(400, _error(400, "request body missing or too large", "invalid_request_error"))
            return None
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send_json(400, _error(400, f"invalid JSON body: {exc}", "invalid_request_error"))
            return None
        if not isinstance(body, dict):
            self._send_json(
                400, _error(400, "the request body must be a JSON object", "invalid_request_error")
            )
            return None
        return body

    # -- routes ---------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib hook
        url = urlsplit(self.path)
        engine = self.server.engine
        if url.path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        elif url.path == "/props":
            self._send_json(200, dialect.props_json(engine.profile, engine.n_slots, engine.n_ctx))
        elif url.path in ("/v1/models", "/models"):
            self._send_json(200, dialect.models_json(engine.profile, engine.n_ctx, self.server.created))
        elif url.path == "/slots":
            views = engine.slots()
            if parse_qs(url.query).get("fail_on_no_slot") and all(v.is_processing for v in views):
                self._send_json(503, _error(503, "no slot available", "unavailable_error"))
                return
            self._send_json(200, [dialect.slot_json(v, engine.n_ctx, engine.speculative) for v in views])
        elif url.path == "/metrics":
            body = llama_metrics_text(engine.metrics()).encode()
            headers = {"Process-Start-Time-Unix": str(engine.t_start_us)}
            self._send(200, body, "text/plain; version=0.0.4", headers)
        else:
            self._not_found()

    def do_POST(self) -> None:  # noqa: N802 - stdlib hook
        path = urlsplit(self.path).path
        if path not in ("/completion", "/completions", "/v1/chat/completions", "/chat/completions"):
            self._not_found()
            return
        body = self._read_json()
        if body is None:
            return
        chat = "chat" in path
        engine = self.server.engine
        try:
            prompt = dialect.chat_prompt(body.get("messages")) if chat else _prompt_text(body)
        except ValueError as exc:
            self._send_json(400, _error(400, str(exc), "invalid_request_error"))
            return
        n_predict = _n_predict(body)
        stream = body.get("stream") is True
        types = "none,draft-simple" if engine.speculative else "none"
        overrides: dict[str, Any] = {
            "max_tokens": n_predict,
            "n_predict": n_predict,
            "speculative.types": types,
            "stream": stream,
        }
        if chat:
            overrides.update(chat_format="peg-native", generation_prompt=dialect.CHAT_GENERATION_PROMPT)
        params = dialect.task_params(body, overrides)
        sample_seed = None
        if params["temperature"] > 0:
            sample_seed = params["seed"] if params["seed"] != 4294967295 else time.monotonic_ns()
        try:
            task = engine.submit(
                prompt,
                n_predict=n_predict,
                ignore_eos=bool(params["ignore_eos"]),
                timings_per_token=bool(params["timings_per_token"]),
                params=dialect.compact_params(params),
                sample_seed=sample_seed,
            )
        except ContextExceeded as exc:
            self._send_json(400, _error(400, str(exc), "exceed_context_size_error"))
            return
        model = engine.profile.model_alias
        if chat:
            include_usage = isinstance(body.get("stream_options"), dict) and bool(
                body["stream_options"].get("include_usage")
            )
            fmt: ChatFormat | CompletionFormat = ChatFormat(model, int(time.time()), include_usage)
        else:
            fmt = CompletionFormat(model, prompt, params, task.n_prompt)
        if stream:
            self._stream(task, fmt)
        else:
            result = self._wait_result(task)
            if result is None:
                self._send_json(503, _error(503, "server is shutting down", "unavailable_error"))
            else:
                self._send_json(200, fmt.whole(result))

    def _next_event(self, task: Task) -> TokenEvent | TaskResult | None:
        engine = self.server.engine
        while True:
            try:
                return task.out.get(timeout=0.25)
            except queue.Empty:
                if engine.stopped:
                    return None

    def _wait_result(self, task: Task) -> TaskResult | None:
        while True:
            ev = self._next_event(task)
            if ev is None or isinstance(ev, TaskResult):
                return ev

    def _stream(self, task: Task, fmt: ChatFormat | CompletionFormat) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("X-Accel-Buffering", "no")
        self.end_headers()
        try:
            while True:
                ev = self._next_event(task)
                if ev is None:
                    self.close_connection = True
                    break
                final = isinstance(ev, TaskResult)
                objs = fmt.final(ev) if isinstance(ev, TaskResult) else fmt.partial(ev)
                data = b"".join(b"data: " + _json_bytes(o) + b"\n\n" for o in objs)
                if final and fmt.done_marker:
                    data += b"data: [DONE]\n\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                if final:
                    break
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.server.engine.cancel(task)


def _prompt_text(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise ValueError('"prompt" must be a string')
    return prompt


def _n_predict(body: dict[str, Any]) -> int:
    for key in ("n_predict", "max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value if value >= 0 else -1
    return -1
