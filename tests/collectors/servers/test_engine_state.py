"""Engine state beyond drafting, read from source-derived page lines (tests/support/
engine_state_pages.py cites each); the truths are computed by hand there."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from collectors.promtext import parse
from collectors.servers import engine_state, open_collector
from collectors.simulator import Simulator
from tests.support import engine_state_pages as pages


def test_vllm_033_dp2_waiting_by_reason_kv_sleep_and_preemptions() -> None:
    state = engine_state.vllm(parse(pages.VLLM_033_DP2))
    assert state["waiting_by_reason"] == (("capacity", 5), ("deferred", 1))
    assert state["kv_cache_usage"] == pytest.approx(0.375)
    assert state["engine_sleeping"] is True  # engine 1 has its weights offloaded
    assert state["preemptions_total"] == 7


def test_vllm_011_pid_copies_of_one_engine_are_not_summed() -> None:
    assert engine_state.vllm(parse(pages.VLLM_011_PID_COPIES))["kv_cache_usage"] == pytest.approx(0.4)


def test_vllm_066_older_names_and_no_sleep_series() -> None:
    state = engine_state.vllm(parse(pages.VLLM_066))
    assert state["kv_cache_usage"] == 0.125 and state["preemptions_total"] == 2
    assert state["engine_sleeping"] is None and state["waiting_by_reason"] == ()


def test_sglang_0523_steps_idle_and_live_token_latencies() -> None:
    state = engine_state.sglang(parse(pages.SGLANG_0523))
    assert state == {
        "kv_cache_usage": pytest.approx(0.3),
        "spec_num_steps": 3,
        "idle_s_total": 12.5,
        "itl_observations_total": 840,
    }


def test_an_absent_series_is_unknown() -> None:
    assert engine_state.vllm({}) == {
        "kv_cache_usage": None,
        "waiting_by_reason": (),
        "preemptions_total": None,
        "engine_sleeping": None,
    }


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_snapshots_carry_the_engine_state(backend: str) -> None:
    async def poll(url: str) -> object:
        async with httpx.AsyncClient(timeout=30) as client:
            return await open_collector(url, backend, client=client).poll()

    with Simulator(seed=1, speedup=20, backend=backend) as sim:
        snap = asyncio.run(poll(sim.draft_url))
    assert snap.kv_cache_usage == 0.0  # idle
    if backend == "vllm":
        assert snap.engine_sleeping is False and snap.preemptions_total == 0
        assert snap.waiting_by_reason == (("capacity", 0), ("deferred", 0))
    else:
        assert snap.spec_num_steps == sim.profile.draft.n_max


@pytest.mark.slow
def test_a_page_with_forty_thousand_waiting_reasons_is_read_in_one_pass_and_kept_short() -> None:
    lines = ["# TYPE vllm:num_requests_waiting_by_reason gauge"]
    for engine in ("0", "1"):
        lines += [
            f'vllm:num_requests_waiting_by_reason{{engine="{engine}",reason="r{i:05d}"}} {1 + i % 3}'
            for i in range(20_000)
        ]
    lines.append('vllm:num_requests_waiting_by_reason{engine="0",reason="capacity"} 50')
    waiting = dict(engine_state.vllm(parse("\n".join(lines) + "\n"))["waiting_by_reason"])
    assert len(waiting) == engine_state.MAX_REASONS + 1 and waiting["capacity"] == 50
    # every waiting request is counted once: by its reason, or as "other"
    total = 50 + 2 * sum(1 + i % 3 for i in range(20_000))
    assert sum(waiting.values()) == total
    assert all(n == 6 for reason, n in waiting.items() if reason not in ("capacity", "other"))
