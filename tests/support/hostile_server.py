"""Hostile servers: real answers with the server's text replaced by terminal attacks and Rich markup.

`HostileLlama` is the captured llama-server (tests/data/llama-server, draft-simple) whose model
name, build, speculative types, finish reason, /health body, SSE error and HTTP error bodies all
carry `TEXT`; `hostile_vllm` is the fake vLLM whose `model_name` label and model id carry it, and
`hostile_prometheus` a Prometheus whose query errors do. `python -m tests.support.hostile_server
--port N …` serves the captures unaltered, as a command a sweep launches (its other flags ignored).
`serving` puts either on a loopback port that answers GET and POST, for the CLI run as a
subprocess and for the dashboard.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from tests.support import captures
from tests.support.fake_servers import Answer, FakeVllm, Routes, VllmEngine, json_answer, vllm_page
from tests.support.loopback import running

# OSC 0 retitles the pane, OSC 52 sets the clipboard, CSI 2J clears the screen, 0x9b is the C1 CSI
ATTACKS = ("\x1b]0;pwned\x07", "\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x9b31m")
MARKUP = ("[/x]", "[bold")
TEXT = " ".join(MARKUP) + " evil" + "".join(ATTACKS)  # the attacks last: a file name shown keeps them
SHOWN = "[/x] [bold evil\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m"  # TEXT made printable
PREFIX = "draft-simple"

StreamMode = Literal["ok", "sse-error", "http-error"]


def _sse(events: list[dict]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"


def _captured_events(native: bool) -> list[dict]:
    name = f"{PREFIX}.{'completion' if native else 'chat'}.sse.jsonl"
    return [json.loads(line[5:]) for _, line in captures.sse_lines(name) if line.startswith("data: {")]


def captured_llama(path: str, query: dict[str, str]) -> Answer:
    """llama-server as it answered when captured: no hostile text."""
    files = {"/health": "health", "/props": "props", "/slots": "slots.idle", "/v1/models": "models"}
    if path in files:
        return json_answer(captures.read_json(f"{PREFIX}.{files[path]}.json"))
    if path == "/metrics":
        return 200, "text/plain; version=0.0.4", captures.read_text(f"{PREFIX}.metrics.after.txt").encode()
    if path in ("/completion", "/v1/chat/completions"):
        return 200, "text/event-stream", _sse(_captured_events(native=path == "/completion"))
    return 404, "application/json", b'{"error": {"code": 404, "message": "File Not Found"}}'


@dataclass
class HostileLlama:
    """llama-server's captured answers with `text` wherever the server speaks for itself."""

    text: str = TEXT
    stream: StreamMode = "ok"  # completions: a normal stream, an error event mid-stream, an HTTP 500
    health_status: int = 200
    slot_id: object = None  # a wrongly typed /slots id (e.g. text), for a poll that cannot be read

    def __call__(self, path: str, query: dict[str, str]) -> Answer:
        if path == "/health":
            # raw text, not JSON-escaped: what a proxy or a broken server in front of it may send
            return self.health_status, "text/plain", f"status: {self.text}".encode()
        if path == "/props":
            props = captures.read_json(f"{PREFIX}.props.json")
            props.update(model_alias=self.text, model_path=self.text, build_info=self.text)
            return json_answer(props)
        if path == "/slots":
            slots = captures.read_json(f"{PREFIX}.slots.busy.json")
            for slot in slots:
                if slot.get("params"):
                    slot["params"]["speculative.types"] = self.text
                if self.slot_id is not None:
                    slot["id"] = self.slot_id
            return json_answer(slots)
        if path == "/metrics":
            return 200, "text/plain; version=0.0.4", captures.read_text(f"{PREFIX}.metrics.busy.txt").encode()
        if path == "/v1/models":
            models = captures.read_json(f"{PREFIX}.models.json")
            models["data"][0]["id"] = self.text
            return json_answer(models)
        if path in ("/completion", "/v1/chat/completions"):
            return self.completion(native=path == "/completion")
        return 404, "text/plain", f"not found: {self.text}".encode()

    def completion(self, native: bool) -> Answer:
        if self.stream == "http-error":
            return 500, "text/plain", f"internal error: {self.text}".encode()
        events = _captured_events(native)
        for event in events:
            event["model"] = self.text
            if event.get("stop"):
                event["stop_type"] = self.text
            for choice in event.get("choices") or []:
                if choice.get("finish_reason"):
                    choice["finish_reason"] = self.text
        if self.stream == "sse-error":
            events = [*events[:3], {"error": {"code": 500, "message": self.text, "type": "server_error"}}]
        return 200, "text/event-stream", _sse(events)


def hostile_vllm(text: str = TEXT) -> Routes:
    """A fake vLLM whose `model_name` label and /v1/models id are `text`."""
    engines = [VllmEngine(generated=100, drafts=10, draft_tokens=30, accepted=20, per_pos=(9, 7, 4))]
    fake = FakeVllm(
        engines, step=[VllmEngine(generated=16, drafts=4, draft_tokens=12, accepted=8, per_pos=(4, 3, 1))]
    )

    def routes(path: str, query: dict[str, str]) -> Answer:
        if path == "/metrics":
            page = vllm_page(fake.engines, model=text)
            fake.engines = [e.plus(s) for e, s in zip(fake.engines, fake.step, strict=True)]
            return 200, "text/plain; version=0.0.4; charset=utf-8", page.encode()
        if path == "/v1/models":
            return json_answer(
                {"object": "list", "data": [{"id": text, "object": "model", "owned_by": "vllm"}]}
            )
        return fake(path, query)

    return routes


def hostile_prometheus(text: str = TEXT) -> Routes:
    """A Prometheus (or what answers in its place) whose query API fails every query with `text`."""

    def routes(path: str, query: dict[str, str]) -> Answer:
        body = {"status": "error", "errorType": "bad_data", "error": text}
        return 200 if path == "/api/v1/query" else 404, "application/json", json.dumps(body).encode()

    return routes


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        if self.command == "POST":
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urlsplit(self.path)
        self.server.requests.append((url.path, dict(self.headers)))  # type: ignore[attr-defined]
        status, content_type, body = self.server.routes(url.path, dict(parse_qsl(url.query)))  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(routes: Routes, requests: list[tuple[str, dict[str, str]]] | None = None) -> Iterator[str]:
    """`routes` on 127.0.0.1 at a free port (GET and POST, requests served concurrently); each
    request's path and headers are appended to `requests`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.routes = routes  # type: ignore[attr-defined]
    server.requests = requests if requests is not None else []  # type: ignore[attr-defined]
    with running(server) as url:
        yield url


if __name__ == "__main__":
    # as a launched server: `--port N` is read, every other flag (an API key too) is ignored
    port = int(sys.argv[sys.argv.index("--port") + 1])
    launched = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    launched.routes, launched.requests = captured_llama, []  # type: ignore[attr-defined]
    launched.serve_forever()
