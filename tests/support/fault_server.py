"""A fault-injecting fake server on a real loopback port: llama-server's captured answers by
default, and on any path any fault a test names: a status, a body (wrong types, not JSON, bytes
that are not UTF-8, a body cut short), an endless or slow stream, a dropped connection, a hang.

Built on the standard library's threading HTTP server speaking HTTP/1.1 (kept-alive connections,
chunked streams), so the client code runs unchanged against it and a CLI subprocess can be
pointed at it. Faults are answers: `Reply`, `Stream`, `Hang`, `Drop`, and `Script` (one answer per
request in turn, the last repeating), e.g. `Script(Reply(ok), Drop(), Reply(ok))` drops the second
request, which httpx sends on the connection the first one left open.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.captures import read_text, sse_lines
from tests.support.fake_servers import Routes

PREFIX = "draft-simple"  # the captured server that drafts


@dataclass(frozen=True)
class Reply:
    """One whole answer. `body`: bytes as they are, text as UTF-8, anything else as JSON."""

    body: Any = b""
    status: int = 200
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    length: int | None = None  # a Content-Length other than the body's: a body cut short

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return self.body.encode() if isinstance(self.body, str) else json.dumps(self.body).encode()


@dataclass(frozen=True)
class Stream:
    """A chunked answer: `chunks()` sent one by one, `delay_s` apart; endless when they are."""

    chunks: Callable[[], Iterable[bytes]]
    delay_s: float = 0.0
    status: int = 200
    content_type: str = "text/event-stream"
    drop: bool = False  # hang up after the chunks instead of ending the answer properly


@dataclass(frozen=True)
class Hang:
    """Read the request, then say nothing until the server stops."""


@dataclass(frozen=True)
class Drop:
    """Read the request, then close the connection without a word."""


class Script:
    """Answers given in turn, one per request; the last one repeats."""

    def __init__(self, *answers: Any) -> None:
        self._answers = list(answers)
        self._lock = threading.Lock()

    def next(self) -> Any:
        with self._lock:
            return self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]


def events(*payloads: Any) -> Callable[[], Iterator[bytes]]:
    """SSE events, one per payload (text as the data line, anything else as JSON)."""

    def chunks() -> Iterator[bytes]:
        for payload in payloads:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            yield f"data: {data}\n\n".encode()

    return chunks


def endless(payload: Any) -> Callable[[], Iterator[bytes]]:
    """The same SSE event for ever."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return lambda: itertools.repeat(f"data: {data}\n\n".encode())


def captured_stream(name: str) -> Callable[[], Iterator[bytes]]:
    """A captured stream (tests/data/llama-server), one chunk per line as the server sent them."""
    return lambda: iter([(line + "\n\n").encode() for _, line in sse_lines(name)])


def llama_routes(prefix: str = PREFIX) -> dict[str, Any]:
    """llama-server's captured answers, by path."""
    return {
        "/health": Reply(read_text(f"{prefix}.health.json")),
        "/props": Reply(read_text(f"{prefix}.props.json")),
        "/slots": Reply(read_text(f"{prefix}.slots.idle.json")),
        "/metrics": Reply(
            read_text(f"{prefix}.metrics.before.txt"), content_type="text/plain; version=0.0.4"
        ),
        "/v1/models": Reply(read_text(f"{prefix}.models.json")),
        "/completion": Stream(captured_stream(f"{prefix}.completion.sse.jsonl")),
        "/v1/chat/completions": Stream(captured_stream(f"{prefix}.chat.sse.jsonl")),
    }


class FaultServer:
    """Answers by path: `faults` first, then `base` (llama-server's captures unless given routes
    such as a FakeVllm), else 404. `hits` counts requests by path."""

    def __init__(self, faults: Mapping[str, Any] | None = None, base: Routes | None = None) -> None:
        self.answers: dict[str, Any] = {} if base is not None else llama_routes()
        self.answers.update(faults or {})
        self.base = base
        self.hits: Counter[str] = Counter()
        self.stopping = threading.Event()
        self._serving = False
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.owner = self
        self.url = f"http://127.0.0.1:{self._http.server_port}"

    def set(self, path: str, answer: Any) -> None:
        self.answers[path] = answer

    def answer(self, path: str, query: dict[str, str]) -> Any:
        self.hits[path] += 1
        answer = self.answers.get(path)
        if isinstance(answer, Script):
            return answer.next()
        if answer is not None:
            return answer
        if self.base is not None:
            status, content_type, body = self.base(path, query)
            return Reply(body, status, content_type)
        return Reply({"error": {"code": 404, "message": "File Not Found"}}, 404)

    def __enter__(self) -> FaultServer:
        self._serving = True
        threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering (hung and endless answers end too); later connections are refused."""
        if not self.stopping.is_set():
            self.stopping.set()
            if self._serving:
                self._http.shutdown()
            self._http.server_close()
            self._http.hang_up()  # kept-alive connections too: a stopped server answers nothing


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FaultServer

    def server_activate(self) -> None:
        super().server_activate()
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def hang_up(self) -> None:
        with self.connections_lock:
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up on an endless answer is what these tests do


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._serve()

    def _serve(self) -> None:
        owner = self.server.owner
        url = urlsplit(self.path)
        answer = owner.answer(url.path, dict(parse_qsl(url.query)))
        if isinstance(answer, Hang):
            owner.stopping.wait()
            self.close_connection = True
        elif isinstance(answer, Drop):
            self.close_connection = True
        elif isinstance(answer, Stream):
            self._stream(answer, owner.stopping)
        else:
            self._reply(answer)

    def _reply(self, reply: Reply) -> None:
        body = reply.payload()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(body) if reply.length is None else reply.length))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        if reply.length is not None and reply.length != len(body):
            self.close_connection = True

    def _stream(self, stream: Stream, stopping: threading.Event) -> None:
        self.send_response(stream.status)
        self.send_header("Content-Type", stream.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in stream.chunks():
                if stopping.is_set():
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                if stream.delay_s:
                    time.sleep(stream.delay_s)
            if stream.drop:
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up on it: what a bounded client does
