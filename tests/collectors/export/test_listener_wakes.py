"""The exporter's listener thread sleeps until a scrape comes (socketserver's default wakes it twice
a second, a cost an idle `spectop export` paid all day), and still stops at once when asked."""

from __future__ import annotations

import time

import httpx
import pytest
from prometheus_client import CollectorRegistry, Gauge

from collectors.export.listener import BoundedServer, start_listener
from collectors.launch.process import free_port


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_the_listener_wakes_for_scrapes_only_and_stops_at_once(monkeypatch, host):
    wakes: list[float] = []  # serve_forever calls service_actions after each wait
    monkeypatch.setattr(BoundedServer, "service_actions", lambda self: wakes.append(time.monotonic()))
    registry = CollectorRegistry()
    Gauge("spectop_up", "up", registry=registry).set(1)
    port = free_port()
    server, thread = start_listener(host, port, registry)
    try:
        time.sleep(0.8)
        idle_wakes = len(wakes)
        page = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False)
    finally:
        stop_t0_s = time.monotonic()
        server.shutdown()
        stopped_s = time.monotonic() - stop_t0_s
        server.server_close()
    assert page.status_code == 200 and "spectop_up 1.0" in page.text
    assert idle_wakes == 0, wakes
    assert stopped_s < 1.0 and not thread.is_alive()
