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
