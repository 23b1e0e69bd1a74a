"""A launched server is ready only when it is the one answering: its port was free before it
started, it is still running, and the listening socket is its own (or a child's). Otherwise the
arm fails saying why, and nothing it started is left running."""

from __future__ import annotations

import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from collectors.errors import SpectopError
from collectors.launch import process
from collectors.launch.ownership import listens
from collectors.launch.process import ServerProcess
from tests.support.loopback import running

SERVE = """
import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
def serve():
    print("serving from", os.getpid(), flush=True)
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""
FOREGROUND = SERVE + "serve()\n"
# a launcher: forks the server off, waits until it serves (as daemonizing tools do), then exits
FORKS_AND_EXITS = (
    SERVE
    + "import socket, time\n"
    + "if os.fork() == 0:\n    serve()\n"
    + "while True:\n"
    + "    try:\n        socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=1).close()\n        break\n"
    + "    except OSError:\n        time.sleep(0.01)\n"
    + "sys.exit(0)\n"
)


class Other(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone(pid: int) -> bool:
    for _ in range(100):
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_server_in_the_foreground_is_its_own_answer(tmp_path):
    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    port = other.server_port
    other.server_close()  # a port that was free a moment ago
    argv = [sys.executable, "-c", FOREGROUND, str(port)]
    with ServerProcess(argv, url=f"http://127.0.0.1:{port}", log_path=tmp_path / "s.log") as server:
        assert listens(server.pid, port) is True
    assert listens(server.pid, port) is False


def test_a_port_already_taken_fails_before_the_server_starts(tmp_path):
    with running(ThreadingHTTPServer(("127.0.0.1", 0), Other)) as url:
        port = int(url.rsplit(":", 1)[1])
        server = ServerProcess(
            [sys.executable, "-c", FOREGROUND, str(port)], url=url, log_path=tmp_path / "s.log"
        )
        with pytest.raises(SpectopError, match="already listening on 127.0.0.1:.*before it started"):
            server.start()
    assert server.pid is None  # nothing was started


def test_another_process_answering_on_its_port_is_not_the_server(tmp_path, monkeypatch):
    # the port was taken between the check and the start (a race the check cannot close)
    monkeypatch.setattr(process, "port_in_use", lambda host, port: False)
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    with running(ThreadingHTTPServer(("127.0.0.1", 0), Other)) as url:
        server = ServerProcess(sleeper, url=url, log_path=tmp_path / "s.log", name="draft server")
        with pytest.raises(SpectopError, match="draft server is running, but what answers at .* is another"):
            server.start()
    assert not server.running


def test_a_command_that_forks_and_exits_fails_and_leaves_nothing_running(tmp_path):
    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    port = other.server_port
    other.server_close()
    log = tmp_path / "s.log"
    server = ServerProcess(
        [sys.executable, "-c", FORKS_AND_EXITS, str(port)], url=f"http://127.0.0.1:{port}", log_path=log
    )
    with pytest.raises(SpectopError, match="exited with code 0"):
        server.start()
    daemon = int(log.read_text().split()[-1]) if "serving from" in log.read_text() else None
    if daemon is not None:  # it got as far as serving: stopped with the command's process group
        assert gone(daemon)
