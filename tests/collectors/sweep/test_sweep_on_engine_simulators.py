"""The sweep against the vLLM- and SGLang-speaking simulators recovers note 25's table (collectors/docs/note25.md).

The same engines and calibration as the llama-server sweep (test_sweep_on_simulator.py, whose
docstring explains the load-stretch correction used here): only the dialect differs, so the
sweep reads its window counters from vLLM's or SGLang's `/metrics`, and its requests go over
vLLM's OpenAI chat (per-step chunks) or SGLang's native /generate (exact verify passes in the
last meta_info). A point is held to note 25 within 5 % once the idle stretch is out, when the
simulator ran its batch.
"""

from __future__ import annotations

import pytest

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.events import PointDone, PointProgressed, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep

pytestmark = pytest.mark.slow  # minutes of simulated serving: `-m 'not slow'` leaves it out

SPEEDUP = 4.0
# note 25: requests -> plain tok/s, draft tok/s, plain mJ/token, draft mJ/token, plain W, draft W
NOTE25 = {
    1: (61.9, 78.3, 370, 381, 22.9, 29.8),
    2: (100.2, 125.5, 391, 279, 39.1, 35.0),
    4: (192.3, 163.4, 203, 227, 39.0, 37.1),
    8: (339.2, 229.8, 109, 163, 36.9, 37.6),
    16: (377.0, 329.1, 95, 114, 35.9, 37.5),
}
TOLERANCE = 0.05


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_a_sweep_on_an_engine_simulator_recovers_note25(tmp_path, backend) -> None:
    points = []
    with Simulator(seed=3, speedup=SPEEDUP, backend=backend) as sim:
        meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
        plan = SweepPlan(batches=tuple(NOTE25), max_tokens=512, passes=1, idle_s=1.0)
        arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
        events = []
        with Sampler(meter) as sampler:
            for event in run_sweep(plan, arms, sampler, tmp_path):
                if isinstance(event, PointProgressed) and event.state == "running":
                    before = sim.accelerator.read()
                elif isinstance(event, PointDone):
                    after = sim.accelerator.read()
                    points.append(
                        (to_json(event.row), after.busy_s - before.busy_s, after.request_s - before.request_s)
                    )
                events.append(event)
        meter.close()
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    summary = to_json(ended.summary)
    idle_w = summary["idle_w"]
    for row, busy_s, request_s in points:
        batch, arm = row["batch"], row["arm"]
        assert row["committed_tokens"] == batch * 512
        if request_s / busy_s < 0.98 * batch:  # sent a step or more apart on a loaded machine
            continue
        busy_j = row["energy_j"] - idle_w * (row["energy_window_s"] - busy_s)
        p_tok, d_tok, p_mj, d_mj, p_w, d_w = NOTE25[batch]
        want = (p_tok, p_w, p_mj) if arm == "plain" else (d_tok, d_w, d_mj)
        got = (
            row["committed_tokens"] / busy_s / SPEEDUP,
            busy_j / busy_s / SPEEDUP,
            1000 * busy_j / row["committed_tokens"],
        )
        for name, g, w in zip(("tok/s", "W", "mJ/token"), got, want):
            assert g == pytest.approx(w, rel=TOLERANCE), (batch, arm, name)
    for t in summary["rows"]:  # acceptance read from vLLM's counters, note 25's 0.705
        assert 0.67 <= t["draft"]["acceptance"] <= 0.74
