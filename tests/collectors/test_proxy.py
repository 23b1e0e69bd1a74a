"""The capture proxy on real loopback sockets, in front of a scripted server and the simulator.

What it promises a client: the same bytes as without it, chunk by chunk as they come; the API key
passed on and never kept; a 502 with a JSON error naming the server when the server is down; the
server's work cancelled when the client goes away.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.record import RequestRecord
from collectors.simulator.simulator import Simulator
from tests.support.loopback import running

KEY = "sk-proxy-test-5ec7e7"
# an SSE body cut into chunks across event and UTF-8 boundaries, as a server may flush it
EVENTS = [
    b'data: {"content":"caf',
    b"\xc3",
    b'\xa9","tokens_predicted":1}\n\ndata: {"content":" ok","tokens_predicted":2}\n',
    b'\ndata: {"content":"","stop":true,"tokens_predicted":2,',
    b'"timings":{"predicted_n":2,"draft_n":3,"draft_n_accepted":1}}\n\n',
]
LOCAL = ListenAddress("127.0.0.1", 0)


class Upstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.authorization: list[str | None] = []
        self.cancelled = threading.Event()  # the endless stream's writes failed: its client went
        self.gate = threading.Event()  # the gated stream's second event waits for this
        self.gate_opened_in_time: bool | None = None


class Handler(BaseHTTPRequestHandler):
    server: Upstream

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.authorization.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # HTTP/1.0: the body ends when the connection does
        if self.path == "/completion":
            for chunk in EVENTS:
                self.wfile.write(chunk)
                self.wfile.flush()
                time.sleep(0.01)
            return
        if self.path == "/v1/chat/completions":
            self.wfile.write(EVENTS[0])
            self.wfile.flush()
            self.server.gate_opened_in_time = self.server.gate.wait(20)
            self.wfile.write(b"".join(EVENTS[1:]))
            return
        try:
            while True:  # generates until its client is gone
                self.wfile.write(b'data: {"content":"x","tokens_predicted":1}\n\n')
                self.wfile.flush()
                time.sleep(0.01)
        except OSError:
            self.server.cancelled.set()

    def do_GET(self) -> None:
        body = b'{"error":{"code":404,"message":"File Not Found"}}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, str]]:
    server = Upstream()
    with running(server) as url:
        yield server, url


def raw_answer(url: str, path: str, body: dict, headers: dict | None = None) -> tuple[int, str, bytes]:
    with httpx.Client(timeout=30, trust_env=False) as client:
        with client.stream("POST", url + path, json=body, headers=headers or {}) as response:
            return response.status_code, response.headers["content-type"], b"".join(response.iter_raw())


def wait_for(records: list[RequestRecord], n: int) -> list[RequestRecord]:
    for _ in range(200):
        if len(records) >= n:
            break
        time.sleep(0.05)
    return records


def test_the_client_gets_the_same_bytes_and_the_key_goes_through_unrecorded(upstream, caplog, capfd) -> None:
    caplog.set_level(logging.DEBUG)
    server, url = upstream
    records: list[RequestRecord] = []
    auth = {"Authorization": f"Bearer {KEY}"}
    direct = raw_answer(url, "/completion", {"prompt": "p"}, auth)
    with ProxyServer(url, LOCAL, records.append) as proxy:
        through = raw_answer(proxy.url, "/completion", {"prompt": "p"}, auth)
        wait_for(records, 1)
    assert through == direct and direct[2] == b"".join(EVENTS)
    assert server.authorization == [f"Bearer {KEY}"] * 2
    [record] = records
    assert record.ok and (record.committed_tokens, record.draft_n, record.draft_n_accepted) == (2, 3, 1)
    assert len(record.events) == 2 and record.latency.chunk_gaps.max_ms is not None
    out, err = capfd.readouterr()
    assert KEY not in repr(records) + caplog.text + out + err


def test_other_routes_pass_through_unrecorded(upstream) -> None:
    _, url = upstream
    records: list[RequestRecord] = []
    with ProxyServer(url, LOCAL, records.append) as proxy:
        direct = httpx.get(url + "/slots?fail_on_no_slot=1", trust_env=False)
        through = httpx.get(proxy.url + "/slots?fail_on_no_slot=1", trust_env=False)
    assert (
        (through.status_code, through.content)
        == (direct.status_code, direct.content)
        == (404, direct.content)
    )
    assert records == []


def test_a_server_that_is_down_is_a_502_naming_it() -> None:
    records: list[RequestRecord] = []
    down = "http://127.0.0.1:9"  # discard: nothing listens there
    with ProxyServer(down, LOCAL, records.append) as proxy:
        answer = httpx.post(proxy.url + "/completion", json={"prompt": "p"}, trust_env=False, timeout=30)
        wait_for(records, 1)
    assert answer.status_code == 502
    assert "cannot reach http://127.0.0.1:9" in answer.json()["error"]["message"]
    assert records[0].error == "cannot reach http://127.0.0.1:9"


def test_each_chunk_reaches_the_client_before_the_server_sends_the_next(upstream) -> None:
    server, url = upstream
    with ProxyServer(url, LOCAL, lambda record: None) as proxy:
        with httpx.Client(timeout=30, trust_env=False) as client:
            with client.stream("POST", proxy.url + "/v1/chat/completions", json={}) as response:
                chunks = response.iter_raw()
                assert next(chunks) == EVENTS[0]  # a buffering proxy would hold it until the end
                server.gate.set()
                assert b"".join(chunks) == b"".join(EVENTS[1:])
    assert server.gate_opened_in_time


def test_a_client_that_goes_away_cancels_the_servers_work(upstream) -> None:
    server, url = upstream
    records: list[RequestRecord] = []
    with ProxyServer(url, LOCAL, records.append) as proxy:
        with httpx.Client(timeout=30, trust_env=False) as client:
            with client.stream("POST", proxy.url + "/v1/completions", json={"prompt": "p"}) as response:
                chunks = response.iter_raw()
                next(chunks), next(chunks)
        # the proxy hangs up on the server, whose next writes fail
        assert server.cancelled.wait(20)
        wait_for(records, 1)
    assert records[0].error == "client disconnected"


@pytest.mark.parametrize("route", ["/completion", "/v1/chat/completions"])
def test_the_simulators_answers_are_the_same_through_the_proxy(route: str) -> None:
    """Temperature 0: the same text, events and counts; only the server's timing figures differ."""
    body = {"prompt": "the power supply", "n_predict": 24, "temperature": 0, "stream": True}
    if route != "/completion":
        body = {
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 24,
            "stream": True,
            "temperature": 0,
        }
    records: list[RequestRecord] = []
    with Simulator(seed=0, speedup=20) as sim, ProxyServer(sim.draft_url, LOCAL, records.append) as proxy:
        direct = raw_answer(sim.draft_url, route, body)
        through = raw_answer(proxy.url, route, body)
        wait_for(records, 1)
    assert through[:2] == direct[:2]
    assert untimed(through[2]) == untimed(direct[2])
    [record] = records
    final = json.loads(through[2].decode().split("data: ")[-1 if route == "/completion" else -2])
    timings = final["timings"]
    assert record.committed_tokens == timings["predicted_n"] == 24
    assert (record.draft_n, record.draft_n_accepted) == (timings["draft_n"], timings["draft_n_accepted"])
    assert record.latency.chunk_gaps.p50_ms is not None


def untimed(body: bytes) -> list[object]:
    """The events of a stream without the fields that hold times, rates or ids."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            for key in ("timings", "created", "id", "system_fingerprint"):
                event.pop(key, None)
            out.append(event)
        elif line:
            out.append(line)
    return out
