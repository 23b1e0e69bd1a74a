"""The capture proxy is no relay: whatever a request's target says, it goes to `--server`'s host and
port or is refused with a 400, so no client (from the network, when bound to 0.0.0.0) can reach
another port through it.

The requests are written on a raw socket, as an attacker would send them: an HTTP client would
normalise the target before it left.
"""

from __future__ import annotations

import socket

import pytest

from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.router import RoutePlan
from tests.support.hostile_server import captured_llama, serving

LOCAL = ListenAddress("127.0.0.1", 0)


def send_raw(proxy_url: str, request_line: str) -> tuple[int, bytes]:
    """Send one request head as written; the status code and body of the answer."""
    host, port = proxy_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(f"{request_line}\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode("latin-1"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize(
    "target",
    [
        "@{other}/internal-secret",  # joined as text, the server URL's host became userinfo
        "http://{other}/internal-secret",  # absolute-form: a forward proxy's request
        "{other}",  # authority-form (CONNECT's)
        "*",  # asterisk-form: no path on the server
    ],
)
def test_a_target_naming_another_port_is_refused_and_never_reaches_it(target):
    watched: list = []
    internal: list = []
    with serving(captured_llama, watched) as server_url, serving(captured_llama, internal) as other_url:
        other = other_url.removeprefix("http://")
        with ProxyServer(server_url, LOCAL, lambda record: None) as proxy:
            status, body = send_raw(proxy.url, f"GET {target.format(other=other)} HTTP/1.1")
            # the proxy still serves ordinary requests after the refusal
            ok_status, _ = send_raw(proxy.url, "GET /health HTTP/1.1")
    assert status == 400 and b"origin-form" in body
    assert internal == []
    assert ok_status == 200 and [path for path, _ in watched] == ["/health"]


def test_a_path_that_looks_like_an_authority_stays_on_the_server():
    watched: list = []
    internal: list = []
    with serving(captured_llama, watched) as server_url, serving(captured_llama, internal) as other_url:
        other = other_url.removeprefix("http://")
        with ProxyServer(server_url + "/", LOCAL, lambda record: None) as proxy:
            status, _ = send_raw(proxy.url, f"GET //{other}/internal-secret HTTP/1.1")
    assert internal == []
    [(path, _)] = watched  # the watched server was asked (and has no such page)
    assert status == 404 and path.endswith("/internal-secret")


def test_a_server_url_with_a_base_path_keeps_it_and_its_query():
    watched: list = []
    with serving(captured_llama, watched) as server_url:
        with ProxyServer(server_url + "/base", LOCAL, lambda record: None) as proxy:
            status, _ = send_raw(proxy.url, "GET /slots?fail_on_no_slot=1 HTTP/1.1")
    assert status == 404 and [path for path, _ in watched] == ["/base/slots"]


def test_the_server_gets_the_clients_headers_and_no_others():
    watched: list = []
    with serving(captured_llama, watched) as server_url:
        with ProxyServer(server_url, LOCAL, lambda record: None) as proxy:
            # a client that sends no Accept, Accept-Encoding or User-Agent of its own
            status, body = send_raw(proxy.url, "GET /props HTTP/1.1\r\nX-Trace: 7")
    [(_, headers)] = watched
    assert status == 200 and body.startswith(b"{")  # not compressed: nobody asked for gzip
    assert {name.lower() for name in headers} == {"host", "x-trace"}
    assert {name.lower(): value for name, value in headers.items()}["x-trace"] == "7"


def test_silent_connections_are_bounded_and_timed_out_and_requests_still_pass(monkeypatch):
    from collectors.requests import proxy_guard

    monkeypatch.setattr(proxy_guard, "MAX_CONNECTIONS", 16)
    monkeypatch.setattr(proxy_guard, "HEAD_TIMEOUT_S", 1.0)
    watched: list = []
    with serving(captured_llama, watched) as server_url:
        with ProxyServer(server_url, LOCAL, lambda record: None) as proxy:
            host, port = proxy.url.removeprefix("http://").rsplit(":", 1)
            silent = [socket.create_connection((host, int(port)), timeout=10) for _ in range(40)]
            silent[-1].sendall(b"GET /health HTTP/1.1\r\nHost: x")  # a head that never ends
            status, _ = send_raw(proxy.url, "GET /health HTTP/1.1")  # a client among them gets in
            closed = 0
            for sock in silent:  # every silent one is closed: made way for another, or timed out
                try:
                    closed += sock.recv(1) == b""
                except ConnectionResetError:
                    closed += 1
                sock.close()
    assert status == 200 and [path for path, _ in watched] == ["/health"]
    assert closed == 40


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_routing_proxy_relays_to_its_two_servers_only(method):
    """Routed by batch (collectors/requests/router.py), a generation or a page goes to --plain or
    --draft; a target naming a third port is refused before any server is chosen."""
    plain: list = []
    draft: list = []
    internal: list = []
    with (
        serving(captured_llama, plain) as plain_url,
        serving(captured_llama, draft) as draft_url,
        serving(captured_llama, internal) as other_url,
    ):
        other = other_url.removeprefix("http://")
        plan = RoutePlan(plain_url, draft_url, 2.0, "batch 2 given")
        with ProxyServer(draft_url, LOCAL, lambda record: None, route=plan) as proxy:
            refused = [
                send_raw(proxy.url, f"{method} {target} HTTP/1.1")
                for target in (f"@{other}/completion", f"http://{other}/completion", other)
            ]
            ok_status, _ = send_raw(proxy.url, f"{method} /completion HTTP/1.1")
    assert all(status == 400 and b"origin-form" in body for status, body in refused)
    # the router polls both servers' pages for their busy slots; of the requests, the one let
    # through went to the drafting server (a GET is a page; a POST alone joins batch 1, below 2)
    assert internal == []
    assert [path for path, _ in plain if path == "/completion"] == []
    assert ok_status == 200 and [path for path, _ in draft if path == "/completion"] == ["/completion"]
