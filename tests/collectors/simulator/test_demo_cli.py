"""`spectop demo` as a user runs it: a subprocess, URLs on stdout, one clean line on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import pytest

from collectors.simulator import Simulator
from collectors.simulator.traffic import Phase, TrafficGenerator, default_pattern
from tests.support.processes import reaped

pytestmark = pytest.mark.slow  # `spectop demo` in a subprocess


def _spectop(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui", "demo", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_serve_only_prints_three_urls_that_answer_and_stops_on_sigint() -> None:
    with reaped(_spectop("--serve-only", "--speedup", "20", "--seed", "3")) as proc:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().split() for _ in range(3)]
        urls = dict(lines)
        assert list(urls) == ["plain", "draft", "meter"]
        # the page with its update period, as `--meter dcgm=` should be given it
        assert urls["meter"].endswith("/metrics?period=0.1")
        with httpx.Client(timeout=10) as client:
            assert client.get(urls["plain"] + "/health").json() == {"status": "ok"}
            assert client.get(urls["draft"] + "/slots").json()[0]["speculative"] is True
            assert client.get(urls["plain"] + "/slots").json()[0]["speculative"] is False
            assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in client.get(urls["meter"]).text
            done = client.post(urls["draft"] + "/completion", json={"prompt": "hi", "n_predict": 16}).json()
            assert done["tokens_predicted"] == 16
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert out == ""
    assert err.strip().splitlines()[-1] == "spectop demo: stopped"
    assert "Traceback" not in err and f"spectop snapshot --server {urls['draft']}" in err


def test_live_demo_prints_a_line_a_second_and_stops_on_sigint() -> None:
    with reaped(_spectop("--no-ui", "--speedup", "10", "--phase", "2", "--tokens", "32")) as proc:
        assert proc.stdout is not None
        header = [proc.stdout.readline() for _ in range(3)]
        assert "plain http://127.0.0.1:" in header[1]
        # a line a second; mJ/token once the rolling window holds a poll the meter covers, which a
        # loaded machine can put off by a few lines: read until one has it (at most 30)
        live = [proc.stdout.readline() for _ in range(3)]
        while not _has_energy(live[-1]) and len(live) < 30:
            live.append(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert all("tok/s" in line and " W " in line for line in live)
    assert _has_energy(live[-1])
    assert err.strip() == "spectop demo: stopped"


def _has_energy(line: str) -> bool:
    return "mJ/token" in line and "—" not in line.split("W")[-1]


def test_port_in_use_is_one_clear_line() -> None:
    with Simulator(speedup=20) as sim:
        port = int(sim.plain_url.rsplit(":", 1)[1])
        with reaped(_spectop("--serve-only", "--port", str(port))) as proc:
            out, err = proc.communicate(timeout=15)
    assert proc.returncode == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--port" in err


def _until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_traffic_walks_its_phases_on_each_arm() -> None:
    # requests of 200 tokens last about half a second here, so each worker keeps one in flight
    # through most of its phase, and the level is there to be seen however late this thread runs
    pattern = [Phase("plain", 2, 1.5), Phase("draft", 4, 1.5)]
    with Simulator(seed=1, speedup=10) as sim:
        urls = {"plain": sim.plain_url, "draft": sim.draft_url}
        with TrafficGenerator(urls, pattern, n_tokens=200, loop=False) as traffic:
            _until(lambda: traffic.phase is not None, 30, "the traffic never started")
            seen: dict[str, set[int]] = {"plain": set(), "draft": set()}

            def walked() -> bool:
                seen["plain"].add(sim.plain.live().busy_slots)
                seen["draft"].add(sim.draft.live().busy_slots)
                return traffic.phase is None  # the pattern ran out

            _until(walked, 30, "the pattern never ended")
        assert max(seen["plain"]) == 2 and max(seen["draft"]) == 4
        assert traffic.completed >= 1 and traffic.errors == 0
    assert [p.arm for p in default_pattern()[:4]] == ["plain", "draft", "plain", "draft"]
    assert [p.concurrency for p in default_pattern()[::2]] == [1, 2, 4, 8, 16, 8, 4, 2]
