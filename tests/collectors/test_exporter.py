"""spectop export as Prometheus scrapes it, against the simulator's draft arm and DCGM meter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from collectors.launch import free_port
from collectors.simulator import Simulator
from collectors.simulator.traffic import Phase, TrafficGenerator


def scrape(url: str) -> dict[str, tuple[dict, float]]:
    families = text_string_to_metric_families(httpx.get(url).text)
    return {s.name: (s.labels, s.value) for f in families for s in f.samples}


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
            with TrafficGenerator({"draft": sim.draft_url}, [Phase("draft", 2, 60.0)], n_tokens=64):
                time.sleep(6.0)
                metrics = scrape(f"http://127.0.0.1:{port}/metrics")
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=10)
    assert metrics["spectop_up"][1] == 1.0 and metrics["spectop_drafting"][1] == 1.0
    labels = metrics["spectop_up"][0]
    assert labels["method"] == "counter" and labels["meter"] == "dcgm" and labels["backend"] == "llama.cpp"
    assert 0.6 < metrics["spectop_draft_acceptance_ratio"][1] < 0.8
    assert metrics["spectop_mean_committed_advance"][1] > 2
    # two concurrent requests on note 25's curve: 35 W and 125.5 tok/s at speedup 4, 279 mJ/token
    assert metrics["spectop_mj_per_token"][1] == pytest.approx(279, rel=0.2)
    assert metrics["spectop_energy_joules_total"][1] > 0
    assert "spectop export: stopped" in err


def test_export_refuses_a_bad_listen_address(capsys):
    from tui.cli import main

    assert main(["export", "--server", "http://127.0.0.1:9", "--meter", "none", "--listen", "nowhere"]) == 2
    assert "--listen must be HOST:PORT" in capsys.readouterr().err
