"""The exporter's listener keeps serving scrapes while peers hold connections that never send a
request: at most MAX_CONNECTIONS are open, the longest-silent one makes way for a new one, and
the threads serving them stay bounded."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest
from prometheus_client import CollectorRegistry, Gauge

from collectors.export.listener import MAX_CONNECTIONS, start_listener
from collectors.launch.process import free_port

pytestmark = pytest.mark.slow  # hundreds of connections


def test_scrapes_are_served_beside_hundreds_of_silent_connections():
    registry = CollectorRegistry()
    Gauge("spectop_up", "up", registry=registry).set(1)
    port = free_port()
    server, _ = start_listener("127.0.0.1", port, registry)
    threads_before = threading.active_count()
    silent = []
    try:
        for _ in range(2 * MAX_CONNECTIONS):  # 128 peers that connect and say nothing
            silent.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        for _ in range(3):
            page = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False)
            assert page.status_code == 200 and "spectop_up 1.0" in page.text
        assert threading.active_count() - threads_before <= MAX_CONNECTIONS + 2
    finally:
        for sock in silent:
            sock.close()
        server.shutdown()
        server.server_close()
