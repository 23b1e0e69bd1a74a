"""Servers a sweep starts from the dashboard die with it: SIGKILL of spectop, or its terminal closing.

The dashboard runs as a user runs it, in a subprocess on a pseudo-terminal that is its controlling
terminal; keys open the sweep dialog and start the quick sweep, whose draft command launches a real
llama-server on the tiny models (from the sweep's worker thread, where no signal handler can be
installed and the parent-death signal would follow the thread). Closing the terminal's master side
is what closing a terminal window does: the kernel sends SIGHUP.
"""

from __future__ import annotations

import signal
import sys
import time

import psutil
import pytest

from collectors.launch.process import free_port
from tests.support.terminal import Terminal

pytestmark = pytest.mark.llama


def _llama_server_child(pid: int, timeout_s: float) -> psutil.Process:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        found = [p for p in psutil.Process(pid).children() if "llama-server" in p.name()]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError("the sweep started no llama-server")


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE  # dead, waiting for a reaper
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("how", ["SIGKILL", "terminal closed"])
def test_a_server_a_dashboard_sweep_started_dies_with_the_dashboard(
    how, llama_server_binary, tiny_models, tmp_path
):
    draft = (
        f"{llama_server_binary} -m {tiny_models.target_path} --port {free_port()} -np 4 -c 4096 -t 1 "
        f"--metrics -md {tiny_models.draft_path} --spec-type draft-simple"
    )
    term = Terminal(
        [sys.executable, "-m", "tui", "dashboard", "--server", "http://127.0.0.1:9", "--meter", "none"]
        + ["--draft-cmd", draft, "--results", str(tmp_path)]
    )
    server = None
    try:
        term.read(3.0)
        term.keys(b"s")
        term.until(b"plain against draft at each batch", 20)  # the sweep dialog's title
        term.keys(b"\t", b"\t", b"\r")  # from the Quick preset to the batches field; Enter runs
        server = _llama_server_child(term.proc.pid, 30)
        if how == "SIGKILL":
            term.proc.send_signal(signal.SIGKILL)
        else:
            term.close()
        for _ in range(100):  # a few seconds at most
            if _gone(server):
                break
            time.sleep(0.05)
        assert _gone(server), f"llama-server outlived the dashboard ({how})"
        if how == "terminal closed":  # and the dashboard itself ended too, with 128 + SIGHUP
            assert term.proc.wait(10) == 128 + signal.SIGHUP
    finally:
        term.close()
        if term.proc.poll() is None:
            term.proc.kill()
        term.proc.wait(10)
        if server is not None and not _gone(server):
            server.kill()
