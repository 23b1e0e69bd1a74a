"""A scheduled arm and a K = 0 arm on the simulated chip, and the demo's walking load over them.

On a manual clock (tests/support/manual_clock.py), so every figure is the schedule's, never the
machine's. Hand-worked truths, from note 25's table (collectors/docs/note25.md) and the K = 0
overhead calibrated to vLLM's published figures (k0_overhead.py: +6.6 % at 2, +21.6 % at 189,
log-linear between: +8.89 % at 4, +11.17 % at 8, +13.46 % at 16; the extra time at 3 W idle):
- a K = 0 step of B requests runs at T_plain(B) / (1 + o) tok/s and draws
  (P_plain(B) + o x 3) / (1 + o) W; at 8: 339.2 / 1.1117 = 305.1 tok/s, 33.49 W, 109.8 mJ/token;
- the walk (1, 2, 4, 8, 16, 8, 4, 2 requests, equal time each; traffic.DEFAULT_LEVELS) gives
  sum(W) / sum(tok/s) over the levels: plain 288.8 / 1702.3 = 169.7 mJ/token, always-draft
  286.7 / 1444.8 = 198.4, and the schedule "draft 4 up to 3, K = 0 from 4" (drafting at 1 and 2,
  K = 0 above) 270.9 / 1625.0 = 166.7: 1.8 % below plain and 16 % below always-draft.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
import pytest

from collectors.simulator import Simulator
from collectors.simulator.engine import Engine
from collectors.simulator.traffic import DEFAULT_LEVELS
from tests.support.manual_clock import ManualClock, run_until_done, stall
from tests.support.simulator_clients import PROMPT

VLLM_SCHEDULE = {"method": "draft_model", "num_speculative_tokens": 4}
SCHEDULED = {**VLLM_SCHEDULE, "num_speculative_tokens_per_batch_size": [[1, 3, 4], [4, 16, 0]]}
K0 = {**VLLM_SCHEDULE, "num_speculative_tokens_per_batch_size": [[1, 16, 0]]}
SGLANG_SCHEDULED = {"1": {"candidate_steps": [4]}, "4": {"candidate_steps": [0]}}
SGLANG_K0 = {"1": {"candidate_steps": [0]}}
# speedup 20 runs every rate and watt 20x (mJ/token unchanged) so the walk takes few real seconds
SPEEDUP = 20.0
PHASE_S = 0.3  # simulated seconds per level: 6 s of the unsped chip
TICK_S = 0.01


def vllm_arms() -> dict[str, list[str]]:
    return {
        name: ["--speculative-config", json.dumps(cfg)]
        for name, cfg in (("scheduled", SCHEDULED), ("k0", K0))
    }


def sglang_arms(tmp_path) -> dict[str, list[str]]:
    arms = {}
    for name, cfg in (("scheduled", SGLANG_SCHEDULED), ("k0", SGLANG_K0)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cfg))
        arms[name] = ["--speculative-adaptive", "--speculative-adaptive-config", str(path)]
    return arms


@dataclass
class Level:
    batch: int
    tokens: int
    energy_mj: float
    drafted: int

    @property
    def mj_per_token(self) -> float:
        return self.energy_mj / self.tokens


def walk(sim: Simulator, engine: Engine, clock: ManualClock) -> list[Level]:
    """Hold each level's requests in flight for PHASE_S (a finished one is replaced at once), then
    drop the level's unfinished ones, as the demo's traffic does; tokens are all decoded ones."""
    accel, levels = sim.accelerator, []
    engine.start()
    try:
        for batch in DEFAULT_LEVELS:
            before, end = accel.read(), clock() + PHASE_S
            tasks = [engine.submit(PROMPT, n_predict=64, ignore_eos=True) for _ in range(batch)]
            done = []
            while clock() < end:
                stall(accel, clock, TICK_S)
                for task in [t for t in tasks if t.done]:
                    tasks.remove(task)
                    done.append(task)
                    tasks.append(engine.submit(PROMPT, n_predict=64, ignore_eos=True))
            for task in tasks:
                engine.cancel(task)
            run_until_done(accel, clock, tasks, TICK_S)
            after = accel.read()
            every = done + tasks
            levels.append(
                Level(
                    batch,
                    sum(t.n_decoded for t in every),
                    after.busy_energy_mj - before.busy_energy_mj,
                    sum(t.draft_n for t in every),
                )
            )
    finally:
        engine.stop()
    return levels


def mj_per_token(levels: list[Level]) -> float:
    return sum(lv.energy_mj for lv in levels) / sum(lv.tokens for lv in levels)


@pytest.fixture(scope="module", params=["vllm", "sglang"])
def walks(request, tmp_path_factory) -> dict[str, list[Level]]:
    clock = ManualClock()
    arms = vllm_arms() if request.param == "vllm" else sglang_arms(tmp_path_factory.mktemp("adaptive"))
    sim = Simulator(backend=request.param, arms=arms, clock=clock, speedup=SPEEDUP)
    return {
        name: walk(sim, engine, clock)
        for name, engine in (("plain", sim.plain), ("draft", sim.draft), *sim.arms.items())
    }


def test_the_scheduled_arm_uses_less_energy_over_the_walk_than_always_draft_and_plain(walks) -> None:
    plain, draft, scheduled = (mj_per_token(walks[arm]) for arm in ("plain", "draft", "scheduled"))
    assert plain == pytest.approx(169.7, rel=0.02)
    assert draft == pytest.approx(198.4, rel=0.02)
    assert scheduled == pytest.approx(166.7, rel=0.02)
    assert scheduled < plain and scheduled < draft


def test_the_scheduled_arm_stays_within_the_band_of_the_lower_envelope_at_every_level(walks) -> None:
    for plain, draft, scheduled in zip(walks["plain"], walks["draft"], walks["scheduled"]):
        envelope = min(plain.mj_per_token, draft.mj_per_token)
        assert scheduled.mj_per_token <= 1.05 * envelope, scheduled.batch
        # it drafts where the schedule says (1 and 2 requests) and never from 4 on
        assert (scheduled.drafted > 0) == (scheduled.batch < 4), scheduled.batch


def test_k0_drafts_nothing_and_costs_the_calibrated_overhead_over_plain(walks) -> None:
    assert all(k0.drafted == 0 for k0 in walks["k0"])
    at_8 = [(p, k) for p, k in zip(walks["plain"], walks["k0"]) if p.batch == 8]
    for plain, k0 in at_8:  # (36.9 + 0.1117 x 3) / 339.2 = 109.8 mJ/token against plain's 108.8
        assert k0.mj_per_token / plain.mj_per_token == pytest.approx(109.8 / 108.8, abs=0.01)


def test_a_scheduled_vllm_reports_its_config_and_counts_only_the_drafts_it_made(tmp_path) -> None:
    clock = ManualClock()
    with Simulator(backend="vllm", arms=vllm_arms(), clock=clock) as sim:
        engine = sim.arms["scheduled"]
        tasks = [engine.submit(PROMPT, n_predict=32, ignore_eos=True) for _ in range(8)]
        run_until_done(sim.accelerator, clock, tasks, 0.25)
        url = f"{sim.arm_urls['scheduled']}/server_info?config_format=json"
        config = httpx.get(url, timeout=10).json()["vllm_config"]
        page = httpx.get(f"{sim.arm_urls['scheduled']}/metrics", timeout=10).text
    spec = config["speculative_config"]
    assert spec["num_speculative_tokens_per_batch_size"] == [[1, 3, 4], [4, 16, 0]]
    # eight requests at once: K = 0 at every step, so the drafting counters never moved
    assert sum(t.draft_n for t in tasks) == 0
    assert "vllm:spec_decode_num_draft_tokens_total" in page
    drafted = [ln for ln in page.splitlines() if ln.startswith("vllm:spec_decode_num_draft_tokens_total")]
    assert drafted and all(float(ln.rsplit(" ", 1)[1]) == 0 for ln in drafted)


def batch_figures(sim: Simulator, engine: Engine, clock: ManualClock, batch: int) -> tuple[float, float]:
    """(tok/s, mJ/token) of `batch` requests submitted at once, over the chip's busy time."""
    tasks = [engine.submit(PROMPT, n_predict=64, ignore_eos=True) for _ in range(batch)]
    before = sim.accelerator.read()
    engine.start()
    try:
        run_until_done(sim.accelerator, clock, tasks, TICK_S)
    finally:
        engine.stop()
    after = sim.accelerator.read()
    tokens = sum(t.n_decoded for t in tasks)
    busy_s = after.busy_s - before.busy_s
    return tokens / busy_s / SPEEDUP, (after.busy_energy_mj - before.busy_energy_mj) / tokens


@pytest.mark.parametrize(("batch", "tok_s", "mj"), [(8, 339.2, 108.8), (16, 150.8, 107.2)])
def test_another_backends_k0_costs_two_and_a_half_steps_from_nine_requests(batch, tok_s, mj) -> None:
    # step-2.5x: no overhead below 9 requests (plain's 339.2 tok/s, 36.9 W: 108.8 mJ/token at 8); from
    # 9 a step lasts 2.5x, the extra 1.5 at 3 W idle: at 16, 377 / 2.5 = 150.8 tok/s at
    # (35.9 + 1.5 x 3) / 2.5 = 16.16 W, 107.2 mJ/token (plain's 95.2: +12.6 %, outside the band)
    clock = ManualClock()
    sim = Simulator(
        backend="vllm", arms=vllm_arms(), clock=clock, speedup=SPEEDUP, k0_overhead="step-2.5x", noise=0.0
    )
    measured_tok_s, measured_mj = batch_figures(sim, sim.arms["k0"], clock, batch)
    # the first step of each request is its prefill at plain's rate; 63 of 64 steps run K = 0
    assert measured_tok_s == pytest.approx(tok_s, rel=0.03)
    assert measured_mj == pytest.approx(mj, rel=0.03)
