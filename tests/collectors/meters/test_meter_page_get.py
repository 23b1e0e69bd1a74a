"""A dcgm-exporter page read on one kept-alive http.client connection (collectors/meters/page_get.py),
against a real HTTP server on loopback: the joules it serves grow with time, as an exporter's do;
a server that closes after each answer, or drops an idle connection, is read again on a new one;
an error status, junk and an oversized page are one-line errors; a URL given with a password is
read through httpx with its Basic auth."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters import page_get
from collectors.meters.exporters import ExporterMeter
from tests.support.fake_exporters import DcgmExporter, DcgmGpu

POWER_W = 300.0


class Exporter(ThreadingHTTPServer):
    """A dcgm-exporter whose GPU has drawn POWER_W since the server started; `how` bends its answers."""

    daemon_threads = True

    def __init__(self, how: str = "keep-alive", password: str | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.how, self.password = how, password
        self.started_s = time.monotonic()
        self.connections: set[int] = set()  # client ports seen
        self.answers = 0

    def page(self) -> bytes:
        gpu = DcgmGpu(0, "GPU-aaaa", energy_mj=0)
        gpu.advance(time.monotonic() - self.started_s, POWER_W)
        return DcgmExporter([gpu]).page().encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept alive unless an answer says otherwise
    server: Exporter

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server = self.server
        server.connections.add(self.client_address[1])
        server.answers += 1
        expected = "Basic " + base64.b64encode(f"me:{server.password}".encode()).decode()
        if server.password is not None and self.headers.get("Authorization") != expected:
            return self._answer(401, b"who are you?\n")
        if server.how == "junk":
            self.wfile.write(b"garbage, not HTTP\r\n\r\n")
            self.close_connection = True
            return
        self._answer(500 if server.how == "error" else 200, server.page())
        # "drops idle": closes without saying so, as a server timing out idle connections does
        self.close_connection = server.how in ("close", "drops idle")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        if self.server.how == "close":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def exporter(how: str = "keep-alive", password: str | None = None) -> Iterator[Exporter]:
    server = Exporter(how, password)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def reads(meter: ExporterMeter, count: int) -> list[float]:
    joules = []
    for _ in range(count):
        time.sleep(0.02)
        joules.append(meter.read().energy_j)
    return joules


@pytest.mark.parametrize("how", ["keep-alive", "close", "drops idle"])
def test_the_joules_grow_on_one_connection_or_on_a_new_one_each_time_the_server_closed(how):
    with exporter(how) as server:
        meter = ExporterMeter(f"http://127.0.0.1:{server.server_port}/metrics", "dcgm", min_interval_s=0)
        try:
            joules = reads(meter, 5)
        finally:
            meter.close()
    assert all(b > a for a, b in zip(joules, joules[1:]))  # every read a new page
    # 0.02 s apart at POWER_W: each step a few joules (a second's worth at most on a slow machine)
    assert all(0 < b - a < POWER_W for a, b in zip(joules, joules[1:]))
    assert server.answers == 6  # the meter's first look, then the five reads
    assert len(server.connections) == (1 if how == "keep-alive" else 6)


@pytest.mark.parametrize(("how", "said"), [("error", "did not answer: HTTP 500"), ("junk", "did not answer")])
def test_an_error_status_or_junk_is_one_line_naming_the_exporter(how, said):
    with exporter(how) as server:
        with pytest.raises(MeterUnavailable, match=said) as raised:
            ExporterMeter(f"http://127.0.0.1:{server.server_port}/metrics", "dcgm")
    assert "\n" not in str(raised.value) and "reachable" in raised.value.fix


def test_an_oversized_page_is_refused(monkeypatch):
    monkeypatch.setattr(page_get, "MAX_PAGE_BYTES", 100)
    with exporter() as server:
        with pytest.raises(MeterUnavailable, match="over"):
            ExporterMeter(f"http://127.0.0.1:{server.server_port}/metrics", "dcgm")


def test_a_url_with_a_password_is_read_with_its_basic_auth():
    with exporter(password="s3cret") as server:
        meter = ExporterMeter(
            f"http://me:s3cret@127.0.0.1:{server.server_port}/metrics", "dcgm", min_interval_s=0
        )
        try:
            joules = reads(meter, 2)
        finally:
            meter.close()
    assert joules[1] > joules[0] > 0
    assert "s3cret" not in meter.url
