"""`spectop probe` beside 15 busy slots of the simulator reads its own share, not the whole board."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from collectors.simulator import Simulator
from collectors.simulator.traffic import Phase, TrafficGenerator
from tui.cli import main

pytestmark = pytest.mark.slow


def busy_slots(url: str) -> int:
    return sum(bool(s.get("is_processing")) for s in httpx.get(url + "/slots", timeout=5.0).json())


def test_a_probe_beside_fifteen_busy_slots_reads_the_servers_mj_per_token(capsys):
    # note 25 (collectors/docs/note25.md), draft arm at 16 concurrent requests: 329.1 tok/s at
    # 37.5 W, so every token of the server costs 1000 · 37.5 / 329.1 = 114 mJ; the probe is one of
    # the 16 equally fast slots and reads the same. Charged the whole board it read 16 times that.
    with Simulator(seed=5, speedup=2.0) as sim:
        pattern = [Phase("draft", 15, 600.0)]
        with TrafficGenerator({"draft": sim.draft_url}, pattern, n_tokens=4000, loop=False):
            deadline = time.monotonic() + 60.0
            while busy_slots(sim.draft_url) < 15:  # wait on the condition, not a fixed time
                assert time.monotonic() < deadline, "the traffic never kept 15 slots busy"
                time.sleep(0.1)
            meter = f"dcgm={sim.meter_url}/metrics?period=0.1"
            args = ["probe", "--server", sim.draft_url, "--tokens", "256", "--meter", meter, "--json"]
            assert main(args) == 0
    energy = json.loads(capsys.readouterr().out)["energy"]
    assert energy["own_share"] is not None and energy["unseen_tokens"] > 0
    assert energy["mj_per_token"] == pytest.approx(114.0, rel=0.2)
