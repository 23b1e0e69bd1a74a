"""A fake server's routes on a real loopback HTTP port, for the CLI tests that open their own client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit

from tests.support.fake_servers import Routes


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        status, content_type, body = self.server.routes(url.path, dict(parse_qsl(url.query)))  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(routes: Routes) -> Iterator[str]:
    """`routes` on 127.0.0.1 at a free port, one request at a time, for the length of the block."""
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    server.routes = routes  # type: ignore[attr-defined]
    with running(server) as url:
        yield url


@contextmanager
def running(server: HTTPServer) -> Iterator[str]:
    """`server` served from a thread for the length of the block; its URL; closed however it ends."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
