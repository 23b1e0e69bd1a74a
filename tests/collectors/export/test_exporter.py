"""spectop export as Prometheus scrapes it, against the simulator's draft arm and DCGM meter."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from collectors.export.exporter import SpectopExporter
from collectors.launch.process import free_port
from collectors.meters import MeterInfo, MeterReading
from collectors.servers.snapshot import ServerSnapshot
from collectors.simulator import Simulator
from collectors.simulator.traffic import Phase, TrafficGenerator
from tests.support.processes import reaped


def samples(text: str) -> dict[str, tuple[dict, float]]:
    return {s.name: (s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples}


def scrape(url: str) -> dict[str, tuple[dict, float]]:
    return samples(httpx.get(url).text)


def stop(proc: subprocess.Popen, grace_s: float = 10.0) -> str:
    """SIGINT and its stderr; a child that does not stop is terminated, then killed: always reaped."""
    try:
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=grace_s)[1]
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.communicate(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


@pytest.mark.slow
def test_a_child_that_ignores_sigint_is_still_reaped():
    code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"  # SIGINT ignored from here
    with pytest.raises(subprocess.TimeoutExpired):
        stop(proc, grace_s=0.5)
    assert proc.returncode == -signal.SIGTERM


class EnergyOnlySampler:
    """What a node_exporter or RAPL meter gives: a joule counter and no power."""

    reads_on_marks = False  # its readings are given: nothing to read at a poll

    def __init__(self, readings: list[MeterReading]) -> None:
        info = MeterInfo("node", ("package-0",), "CPU package", "counter", 1.0)
        self.meter = type("Meter", (), {"info": info})()
        self._readings = readings

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        return [r for r in self._readings if since_t_s is None or r.t_s > since_t_s]


@pytest.mark.slow
def test_export_of_an_energy_only_meter_shows_the_true_power():
    readings = [MeterReading(t / 10, 4.0 * t) for t in range(31)]  # 40 J/s, no power_w
    exporter = SpectopExporter(None, EnergyOnlySampler(readings))
    exporter.update(ServerSnapshot(url="u", backend="llama.cpp", taken_at_s=3.0, status="ok"))
    registry = CollectorRegistry()
    registry.register(exporter)
    metrics = samples(generate_latest(registry).decode())
    assert metrics["spectop_power_watts"][1] == pytest.approx(40.0)
    assert metrics["spectop_energy_joules_total"][1] == pytest.approx(120.0)


@pytest.mark.slow
def test_export_serves_drafting_and_energy_figures():
    port = free_port()
    with Simulator(seed=4, speedup=4.0) as sim:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tui",
                "export",
                "--server",
                sim.draft_url,
                "--listen",
                f"127.0.0.1:{port}",
                "--meter",
                f"dcgm={sim.meter_url}/metrics?period=0.1",
                "--interval",
                "0.25",
                "--window",
                "10",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        try:
            # serving from here (on a loaded machine the imports alone can take several seconds)
            assert proc.stderr is not None and "serving" in proc.stderr.readline()
            with TrafficGenerator({"draft": sim.draft_url}, [Phase("draft", 2, 60.0)], n_tokens=64):
                time.sleep(6.0)  # a rolling window of traffic, then until the figures are there
                deadline = time.monotonic() + 30
                metrics = scrape(f"http://127.0.0.1:{port}/metrics")
                while "spectop_mj_per_token" not in metrics and time.monotonic() < deadline:
                    time.sleep(0.5)
                    metrics = scrape(f"http://127.0.0.1:{port}/metrics")
        finally:
            # that it stops and says so, not how fast: a loaded machine can take a while to join
            # the meter's thread and close its clients
            err = stop(proc, grace_s=30.0)
    assert metrics["spectop_up"][1] == 1.0 and metrics["spectop_drafting"][1] == 1.0
    labels = metrics["spectop_up"][0]
    assert labels["method"] == "counter" and labels["meter"] == "dcgm" and labels["backend"] == "llama.cpp"
    assert 0.6 < metrics["spectop_draft_acceptance_ratio"][1] < 0.8
    assert metrics["spectop_mean_committed_advance"][1] > 2
    # two concurrent requests on note 25's curve (collectors/docs/note25.md): 35 W and 125.5 tok/s at speedup 4, 279 mJ/token
    assert metrics["spectop_mj_per_token"][1] == pytest.approx(279, rel=0.2)
    assert metrics["spectop_energy_joules_total"][1] > 0
    assert "spectop export: stopped" in err


def test_export_refuses_a_bad_listen_address(capsys):
    from tui.cli import main

    assert main(["export", "--server", "http://127.0.0.1:9", "--meter", "none", "--listen", "nowhere"]) == 2
    assert "--listen must be HOST:PORT" in capsys.readouterr().err


class _FailingOnce:
    """A collector whose second poll raises (an answer nothing expected), the others answer."""

    url, backend = "http://127.0.0.1:8080", "llama.cpp"

    def __init__(self) -> None:
        self.polls = 0

    async def poll(self) -> ServerSnapshot:
        self.polls += 1
        if self.polls == 2:
            raise TypeError("'int' object is not iterable")
        return ServerSnapshot(url=self.url, backend=self.backend, taken_at_s=time.monotonic(), status="ok")


async def test_the_poll_loop_outlives_a_poll_that_raises():
    collector = _FailingOnce()
    exporter = SpectopExporter(collector, None)
    seen: list[ServerSnapshot] = []
    update = exporter.update

    def recording(snapshot: ServerSnapshot, feed: int = 0) -> None:
        seen.append(snapshot)
        update(snapshot, feed)

    exporter.update = recording  # type: ignore[method-assign]
    await exporter.run(0.0, should_stop=lambda: collector.polls >= 3)
    assert [s.status for s in seen] == ["ok", "error", "ok"]
    assert seen[1].error == "TypeError: 'int' object is not iterable"
    assert seen[1].url == collector.url


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_export_stops_on_sigint_and_sigterm_with_its_line(sig):
    # nothing listens at the server's port: the loop polls and fails, as an exporter left running does
    args = ["export", "--server", f"http://127.0.0.1:{free_port()}", "--meter", "none"]
    args += ["--listen", f"127.0.0.1:{free_port()}", "--interval", "5"]
    popen = subprocess.Popen(
        [sys.executable, "-m", "tui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with reaped(popen) as proc:
        assert proc.stderr is not None and "serving" in proc.stderr.readline()
        time.sleep(0.5)  # inside the 5 s wait between polls: the flag ends it, not the next poll
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and err.strip() == "spectop export: stopped"


async def test_the_poll_loop_stops_between_polls_when_asked():
    stop = asyncio.Event()

    class Polled:
        url, backend, polls = "http://s", "llama.cpp", 0

        async def poll(self):
            self.polls += 1
            asyncio.get_running_loop().call_later(0.2, stop.set)
            return ServerSnapshot(
                url="http://s", backend="llama.cpp", taken_at_s=time.monotonic(), status="ok"
            )

    collector = Polled()
    # an hour between polls: the loop must end on the flag, within its 0.1 s checks
    await asyncio.wait_for(SpectopExporter(collector, None).run(3600.0, stop.is_set), 30)
    assert collector.polls == 1


async def test_the_poll_loop_given_its_stop_event_sleeps_until_the_next_poll_or_the_stop():
    stop = asyncio.Event()
    looks: list[float] = []

    def should_stop() -> bool:
        looks.append(time.monotonic())
        return stop.is_set()

    class Polled:
        url, backend, polls = "http://s", "llama.cpp", 0

        async def poll(self):
            self.polls += 1
            if self.polls == 2:
                asyncio.get_running_loop().call_later(0.5, stop.set)
            return ServerSnapshot(
                url="http://s", backend="llama.cpp", taken_at_s=time.monotonic(), status="ok"
            )

    collector = Polled()
    await asyncio.wait_for(SpectopExporter(collector, None).run(0.3, should_stop, stop), 30)
    # polls at 0 and 0.3 s, the stop at 0.8 s: the third poll (0.6 s) came on time, and the loop
    # ended on the stop, not on the next poll at 0.9 s; between polls it looked at the flag once
    # after each wait (before a poll, after its sleep, after its wait), never each 0.1 s (which
    # would be about 10 looks)
    assert collector.polls == 3
    assert len(looks) <= 3 * 3 + 1
