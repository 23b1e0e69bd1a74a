"""Deriving the plain command from a drafting one, void-draft detection, and ServerProcess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collectors.errors import SpectopError
from collectors.launch.process import (
    ServerProcess,
    derive_plain_argv,
    derive_plain_env,
    free_port,
    has_speculative_flags,
    is_void_draft,
    url_from_argv,
)
from tests.support.processes import reaped

LLAMA = ["llama-server", "-m", "t.gguf", "--port", "8081", "-np", "4"]


@pytest.mark.parametrize(
    ("draft", "dropped"),
    [
        (["-md", "d.gguf", "--spec-type", "draft-simple", "--spec-draft-n-max", "4"], None),
        (["--model-draft=d.gguf", "--spec-type=draft-simple"], None),
        (["--spec-draft-model", "d.gguf", "--spec-draft-p-min", "0.5", "--draft-p-min", "0.1"], None),
        (["-md", "d.gguf", "-ngld", "99", "-td", "2", "-tbd", "2", "-ctkd", "q8_0", "-ctvd", "q8_0"], None),
        (["-md", "d.gguf", "-devd", "none", "-otd", "exps=CPU", "-cmoed", "-ncmoed", "3"], None),
        (["-md", "d.gguf", "-Cd", "ff", "-Crd", "0-3", "--cpu-strict-draft", "1", "--poll-draft", "0"], None),
        (["-md", "d.gguf", "--spec-draft-ngl", "-1", "--spec-type", "draft-simple"], None),
        (["--spec-type", "ngram-mod", "--spec-ngram-mod-n-max", "64", "--spec-default"], None),
        (
            ["-hfd", "user/draft:Q4_K_M", "--spec-type", "draft-simple", "--no-spec-draft-backend-sampling"],
            None,
        ),
        (["-lcs", "static.bin", "-lcd", "dyn.bin", "--spec-type", "ngram-cache"], None),
        (["--spec-draft-future-knob", "7", "--some-new-thing-draft", "x"], None),
    ],
)
def test_llama_server_speculative_flags_are_dropped_with_their_values(
    draft: list[str], dropped: list[str] | None
) -> None:
    plain, dropped_tokens = derive_plain_argv(LLAMA[:3] + draft + LLAMA[3:])
    assert plain == LLAMA
    assert dropped_tokens == draft
    assert has_speculative_flags(LLAMA[:3] + draft + LLAMA[3:])
    assert not has_speculative_flags(plain)


def test_flags_that_merely_look_similar_are_kept() -> None:
    argv = [
        "llama-server",
        "-m",
        "t.gguf",
        "-t",
        "2",
        "-tb",
        "2",
        "-ctk",
        "q8_0",
        "-ngl",
        "99",
        "-dev",
        "none",
    ]
    assert derive_plain_argv(argv) == (argv, [])
    assert not has_speculative_flags(argv)


def test_vllm_speculative_config_in_both_forms() -> None:
    config = '{"method":"draft_model","model":"small","num_speculative_tokens":5}'
    for draft in (
        ["--speculative-config", config],
        [f"--speculative-config={config}"],
        ["-sc", config],
        ["--spec-method", "ngram", "--spec-tokens", "4"],
        ["--speculative-config.method", "ngram", "--speculative-config.num_speculative_tokens", "4"],
        ["--speculative-model", "small", "--num-speculative-tokens", "5"],
    ):
        argv = ["vllm", "serve", "meta/Llama", *draft, "--port", "8000"]
        plain, dropped = derive_plain_argv(argv)
        assert plain == ["vllm", "serve", "meta/Llama", "--port", "8000"], draft
        assert dropped == draft


def test_sglang_speculative_flags() -> None:
    argv = [
        sys.executable, "-m", "sglang.launch_server", "--model-path", "big",
        "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "head",
        "--speculative-num-steps=3", "--speculative-eagle-topk", "1", "--speculative-adaptive",
        "--speculative-num-draft-tokens", "4", "--port", "30000",
    ]  # fmt: skip
    plain, dropped = derive_plain_argv(argv)
    assert plain == [sys.executable, "-m", "sglang.launch_server", "--model-path", "big", "--port", "30000"]
    assert "--speculative-adaptive" in dropped and "head" in dropped


def test_unknown_switch_does_not_swallow_the_next_flag() -> None:
    plain, dropped = derive_plain_argv(["x", "--speculative-shiny-switch", "--port", "1"])
    assert plain == ["x", "--port", "1"] and dropped == ["--speculative-shiny-switch"]


def test_program_name_is_never_dropped() -> None:
    assert derive_plain_argv(["--spec-type"]) == (["--spec-type"], [])


def test_void_draft_detection() -> None:
    assert is_void_draft([*LLAMA, "-md", "d.gguf"], env={})
    assert is_void_draft([*LLAMA, "--model-draft=d.gguf", "--spec-type", "none"], env={})
    assert not is_void_draft([*LLAMA, "-md", "d.gguf", "--spec-type", "draft-simple"], env={})
    assert not is_void_draft([*LLAMA, "-md", "d.gguf", "--spec-type=ngram-mod,draft-simple"], env={})
    assert not is_void_draft([*LLAMA, "-md", "d.gguf"], env={"LLAMA_ARG_SPEC_TYPE": "draft-simple"})
    assert not is_void_draft(LLAMA, env={})
    assert not is_void_draft([*LLAMA, "--spec-type", "ngram-simple"], env={})


def test_plain_env_drops_llama_speculative_variables() -> None:
    env = {"PATH": "/bin", "LLAMA_ARG_SPEC_TYPE": "draft-simple", "LLAMA_ARG_SPEC_DRAFT_MODEL": "d.gguf"}
    assert derive_plain_env(env) == ({"PATH": "/bin"}, ["LLAMA_ARG_SPEC_DRAFT_MODEL", "LLAMA_ARG_SPEC_TYPE"])


def test_url_from_argv() -> None:
    assert url_from_argv(["s", "--port", "9000"]) == "http://127.0.0.1:9000"
    assert url_from_argv(["s", "--host=0.0.0.0", "--port=9001"]) == "http://127.0.0.1:9001"
    assert url_from_argv(["s"], default_port=8000) == "http://127.0.0.1:8000"


def test_server_that_exits_at_once_reports_code_and_log(tmp_path) -> None:
    code = "import sys; print('loading model: no such file', file=sys.stderr); sys.exit(3)"
    server = ServerProcess([sys.executable, "-c", code], url=f"http://127.0.0.1:{free_port()}", name="fake")
    started = time.monotonic()
    with pytest.raises(SpectopError) as info:
        server.start()
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert "fake exited with code 3" in message and "no such file" in message
    assert str(server.log_path) in message and not server.running


def test_missing_program_is_a_clear_error() -> None:
    with pytest.raises(SpectopError, match="cannot start /nonexistent/llama-server"):
        ServerProcess(["/nonexistent/llama-server"], url="http://127.0.0.1:1").start()


def test_timeout_stops_the_process(tmp_path) -> None:
    server = ServerProcess(
        [sys.executable, "-c", "import time; print('still loading', flush=True); time.sleep(60)"],
        url=f"http://127.0.0.1:{free_port()}",
        startup_timeout_s=0.5,
        log_path=tmp_path / "slow.log",
    )
    with pytest.raises(SpectopError, match=r"not ready .* after 0.5 s(.|\n)*still loading"):
        server.start()
    assert server.returncode is not None


# a server that loads for 0.6 s (503, as llama-server answers while loading), then is ready
LOADING = """
import sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
ready_at = time.monotonic() + 0.6
class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        status = 200 if time.monotonic() >= ready_at else 503
        print("health", status, flush=True)
        self.send_response(status)
        self.end_headers()
    def log_message(self, *args):
        pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""


def test_waits_through_503_and_stops_on_exit(tmp_path) -> None:
    port = free_port()
    loading = [sys.executable, "-c", LOADING, str(port)]
    with ServerProcess(loading, url=f"http://127.0.0.1:{port}", log_path=tmp_path / "s.log") as server:
        assert server.running
        answers = (tmp_path / "s.log").read_text().split()
        pid = server.pid
    assert "503" in answers and answers[-1] == "200"  # asked through the loading, ready once it was
    assert not server.running
    assert subprocess.run(["ps", "-p", str(pid)], capture_output=True).returncode != 0


@pytest.mark.slow
def test_a_server_dies_with_a_killed_parent(tmp_path):
    """Even SIGKILL of spectop must not leave a server running (Linux: PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    code = (
        "import sys, time\n"
        "from collectors.launch.process import ServerProcess, free_port\n"
        "port = free_port()\n"
        "s = ServerProcess([sys.executable, '-m', 'http.server', str(port), '--bind', '127.0.0.1'],\n"
        "                  url=f'http://127.0.0.1:{port}', health_path='/').start()\n"
        "print(s.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    root = str(Path(__file__).resolve().parents[3])
    with reaped(
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": root},
        )
    ) as parent:
        child = int(parent.stdout.readline())
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the server outlived its killed parent")
