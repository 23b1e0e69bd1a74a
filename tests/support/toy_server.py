"""A fake Ollama-like server on a loopback port, speaking the toy dialect (tests/support/toy_dialect/).

It answers as a real server would, by time and state: a request is running from its arrival to
its last token and /api/ps counts it only then; it waits `prefill_s` for its first token, then
decodes one step every `step_s`, one token a step, or with `--lookahead K` (`lookahead`) K draft
tokens a step of which one is accepted, so a step commits two; /api/counters moves as the tokens
are sent, never per call. POST /api/generate answers NDJSON, one object a line, a step's lines
written together, and a body that is not the dialect's request is a 400 with an error object.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.loopback import running

VERSION = "0.1.0"


class ToyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, lookahead: int = 0, prefill_s: float = 0.03, step_s: float = 0.01) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lookahead, self.prefill_s, self.step_s = lookahead, prefill_s, step_s
        self.lock = threading.Lock()
        self.running = 0
        self.generated_tokens = 0
        self.decode_steps = 0

    def pages(self, path: str) -> dict[str, Any] | None:
        with self.lock:
            if path == "/api/version":
                return {"server": "toy", "version": VERSION}
            if path == "/api/ps":
                return {"models": [{"name": "toy"}], "running": self.running}
            if path == "/api/counters":
                return {"generated_tokens": self.generated_tokens, "decode_steps": self.decode_steps}
        return None

    def generate(self, n_tokens: int, write: Any) -> None:
        """Stream `n_tokens` tokens through `write(lines)`, moving the counters as they go."""
        with self.lock:
            self.running += 1
        try:
            time.sleep(self.prefill_s)
            sent, drafted, accepted, first = 0, 0, 0, True
            while sent < n_tokens:
                if not first:
                    time.sleep(self.step_s)
                step = 1 if first or not self.lookahead else min(2, n_tokens - sent)
                lines = [{"model": "toy", "response": f"tok{sent + i} ", "done": False} for i in range(step)]
                with self.lock:
                    self.generated_tokens += step
                    if not first:
                        self.decode_steps += 1
                if not first and self.lookahead:
                    drafted, accepted = drafted + self.lookahead, accepted + step - 1
                write(lines)
                sent, first = sent + step, False
            final: dict[str, Any] = {"model": "toy", "response": "", "done": True, "done_reason": "length"}
            final.update(eval_count=sent, prompt_eval_count=7)
            if self.lookahead:
                final.update(draft_tokens=drafted, accepted_tokens=accepted)
            write([final])
        finally:
            with self.lock:
                self.running -= 1


class _Handler(BaseHTTPRequestHandler):
    server: ToyServer

    def do_GET(self) -> None:
        page = self.server.pages(self.path)
        self._answer(200 if page is not None else 404, page if page is not None else {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
        options = body.get("options") if isinstance(body, dict) else None
        if self.path != "/api/generate" or not isinstance(options, dict) or body.get("stream") is not True:
            self._answer(400, {"error": "expected POST /api/generate with stream and options"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()

        def write(lines: list[dict[str, Any]]) -> None:
            self.wfile.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
            self.wfile.flush()

        self.server.generate(int(options["num_predict"]), write)

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def toy_serving(lookahead: int = 0, step_s: float = 0.01) -> Iterator[tuple[str, ToyServer]]:
    """A toy server on a free loopback port for the length of the block: its URL and itself."""
    server = ToyServer(lookahead=lookahead, step_s=step_s)
    with running(server) as url:
        yield url, server
