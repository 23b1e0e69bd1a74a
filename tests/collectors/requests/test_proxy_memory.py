"""The capture proxy passes a request body on as it arrives: two clients each sending 96 MB at once
leave the proxy's memory near where it started, where holding the bodies whole would add 192 MB
and more (a copy per layer). The proxy runs in a child process of its own, as under the
dashboard; its resident memory is sampled while the bodies pass."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import psutil
import pytest

from collectors.launch.process import free_port
from tests.support.loopback import running

pytestmark = pytest.mark.slow  # a child process and 192 MB through it

BODY_MB = 96
PROXY = """
import sys, time
from collectors.requests.proxy_server import ListenAddress, ProxyServer
ProxyServer(sys.argv[1], ListenAddress("127.0.0.1", int(sys.argv[2])), lambda record: None).start()
print("ready", flush=True)
time.sleep(600)
"""


class Sink(BaseHTTPRequestHandler):
    """Reads the body and drops it, then answers a one-line completion."""

    def do_POST(self) -> None:
        left = int(self.headers.get("Content-Length", 0))
        while left:
            left -= len(self.rfile.read(min(left, 1 << 20)))
        body = b'{"content":"ok","tokens_predicted":1,"stop":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def pieces():
    piece = b"x" * (1 << 20)
    for _ in range(BODY_MB):
        yield piece


def test_two_large_bodies_pass_without_being_held(tmp_path):
    port = free_port()
    with running(ThreadingHTTPServer(("127.0.0.1", 0), Sink)) as server_url:
        proxy = subprocess.Popen(
            [sys.executable, "-c", PROXY, server_url, str(port)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert proxy.stdout is not None and proxy.stdout.readline().strip() == "ready"
            child = psutil.Process(proxy.pid)
            before_mb = child.memory_info().rss / 2**20
            peak_mb, sending = before_mb, True

            def sample() -> None:
                nonlocal peak_mb
                while sending:
                    peak_mb = max(peak_mb, child.memory_info().rss / 2**20)
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample)
            sampler.start()
            answers: list[int] = []

            def send() -> None:
                headers = {"Content-Length": str(BODY_MB << 20), "Content-Type": "application/json"}
                with httpx.Client(timeout=120, trust_env=False) as client:
                    answers.append(
                        client.post(
                            f"http://127.0.0.1:{port}/completion", content=pieces(), headers=headers
                        ).status_code
                    )

            clients = [threading.Thread(target=send) for _ in range(2)]
            for c in clients:
                c.start()
            for c in clients:
                c.join()
            sending = False
            sampler.join()
        finally:
            proxy.kill()
            proxy.wait()
    print(f"proxy RSS {before_mb:.0f} MB before, {peak_mb:.0f} MB at the peak")
    assert answers == [200, 200]
    assert peak_mb - before_mb < 64, f"{before_mb:.0f} MB before, {peak_mb:.0f} MB at the peak"
