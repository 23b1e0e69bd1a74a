"""The exporter's HTTP listener: prometheus_client's WSGI app on a server whose connections are
bounded, so a peer cannot take it down by opening connections and sending nothing.

Why not `prometheus_client.start_http_server`: it serves each connection on a thread of its own
with no timeout, so 1,000 connections that never send a request hold 1,000 threads and every file
descriptor, and scrapes time out. Here a connection has `HEAD_TIMEOUT_S` to send its request head;
at most `MAX_CONNECTIONS` are open at once, and when all are taken the one that has waited
longest without sending its head is closed for the new one (a scrape sends its head at once, so
it gets in while idle connections are cycled out); a timed-out or dropped peer is no error to print.
The serving thread wakes only for connections (and every `WAKE_S` besides), not twice a second as
socketserver's default: a `shutdown` knocks on its own port so it ends at once all the same.
"""

from __future__ import annotations

import socket
import threading
from collections import OrderedDict
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import make_wsgi_app
from prometheus_client.registry import CollectorRegistry

HEAD_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 64
WAKE_S = 5.0  # serve_forever looks for a shutdown between waits of this long


class BoundedServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[WSGIRequestHandler]) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self._lock = threading.Lock()
        self._open = 0
        self._waiting: OrderedDict[socket.socket, None] = OrderedDict()  # no request head yet, oldest first

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            if self._open >= MAX_CONNECTIONS:
                if not self._waiting:  # every connection is serving a request: this one waits its turn
                    self.shutdown_request(request)
                    return
                oldest, _ = self._waiting.popitem(last=False)
                _hang_up(oldest)  # its thread sees the end and lets its place go
            self._open += 1
            self._waiting[request] = None
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._open -= 1
                self._waiting.pop(request, None)

    def head_read(self, request: socket.socket) -> None:
        with self._lock:
            self._waiting.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a peer that timed out or hung up: nothing to tell the exporter's user

    def serve_forever(self, poll_interval: float = WAKE_S) -> None:
        super().serve_forever(poll_interval)

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait for it: a connection of our own ends its wait at once."""
        stopping = threading.Thread(target=super().shutdown, daemon=True)
        stopping.start()
        while stopping.is_alive():
            _knock(self.server_address)
            stopping.join(0.05)


def _knock(address: Any) -> None:
    host, port = address[0], address[1]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # bound to every address
    try:
        socket.create_connection((host, port), timeout=1.0).close()
    except OSError:
        pass  # the wait ends within WAKE_S anyway


def _hang_up(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Handler(WSGIRequestHandler):
    timeout = HEAD_TIMEOUT_S  # the socket's timeout: a head (and a scrape) must come within it
    server: BoundedServer

    def parse_request(self) -> bool:
        parsed = super().parse_request()  # reads the headers: a head trickled in stays evictable
        self.server.head_read(self.connection)
        return parsed

    def log_message(self, format: str, *args: Any) -> None:
        pass  # an access log would print on the exporter's terminal


def start_listener(
    host: str, port: int, registry: CollectorRegistry
) -> tuple[BoundedServer, threading.Thread]:
    """Serve `registry` on `host:port` from a daemon thread; OSError when the address cannot be bound."""
    server = BoundedServer((host, port), _Handler)
    server.set_app(make_wsgi_app(registry))
    thread = threading.Thread(target=server.serve_forever, name="spectop-export-listener", daemon=True)
    thread.start()
    return server, thread
