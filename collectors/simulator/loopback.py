"""The HTTP server both simulated endpoints run on: threaded, quiet about clients that hang up,
serving from a daemon thread between `start()` and `stop()`."""

from __future__ import annotations

import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # a burst of concurrent connects must not overflow the backlog
    thread_name = "sim-http"  # the serving thread's name, for thread dumps

    def start(self) -> None:
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.1}, name=self.thread_name, daemon=True
        ).start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is normal here; anything else is reported as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
