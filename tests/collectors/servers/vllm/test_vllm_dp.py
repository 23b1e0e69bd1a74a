"""vLLM data parallelism on pages merged by prometheus_client's multiprocess collector, as vLLM
serves them with more than one API server (tests/support/vllm_dp_pages.py cites the source lines).

The window, worked by hand: DP 2, two API servers, each with half of every engine's requests.
Engine 0 runs 50 steps of 6 requests, engine 1 50 steps of 4: 300 + 200 request-steps, and each
API server observes every step once, so the iteration histogram grows by 2 × (50 + 50) = 200.
True requests per engine step: 500 / 100 = 5 (per engine); summed over engines that step in
parallel (the sweep's figure): 6 + 4 = 10.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors import promtext
from collectors.servers import base
from collectors.servers.vllm import collector as vllm
from collectors.servers.vllm import dp as vllm_dp
from tests.support.fake_servers import VllmEngine, vllm_page
from tests.support.vllm_dp_pages import ApiServer, dp_page

URL = "http://127.0.0.1:8000"
CONFIG = {
    "scheduler_config": {"max_num_seqs": 128},
    "parallel_config": {"data_parallel_size": 2},
}


def half(steps: float, itl: float, running: float, generated: float = 0.0) -> VllmEngine:
    return VllmEngine(steps=steps, itl=itl, running=running, generated=generated)


# each API server's counts per engine before and after the window; the scheduler gauges were last
# written by pid 102 (newest), which saw 6 and 4 running
BEFORE = [
    ApiServer(101, (half(400, 900, 5, 1000), half(300, 500, 3, 700)), stats_at=10.0),
    ApiServer(102, (half(400, 900, 6, 1000), half(300, 500, 4, 700)), stats_at=12.0),
]
AFTER = [
    ApiServer(101, (half(450, 1050, 5, 1200), half(350, 600, 3, 800)), stats_at=20.0),
    ApiServer(102, (half(450, 1050, 6, 1200), half(350, 600, 4, 800)), stats_at=22.0),
]


def test_the_multiprocess_page_has_no_stamps_and_merges_gauges(tmp_path: Path):
    page = dp_page(tmp_path, BEFORE)
    assert "_created" not in page and "process_" not in page and "pid=" not in page  # 0.33: mostrecent
    metrics = promtext.parse(page)
    assert not vllm_dp.single_process(metrics)
    assert vllm_dp.gauge_total(metrics, vllm.RUNNING) == 6 + 4  # the newest write (pid 102)


def test_requests_per_step_divides_by_the_api_servers(tmp_path: Path):
    before = vllm.RawPoll(0.0, metrics=promtext.parse(dp_page(tmp_path / "a", BEFORE)))
    after = vllm.RawPoll(1.0, metrics=promtext.parse(dp_page(tmp_path / "b", AFTER)))
    assert vllm_dp.api_servers(None, after.metrics, vllm.STEPS_HISTOGRAM) == 2  # the default: DP size
    assert per_step(before, after) == pytest.approx(500 / 100)
    snap = vllm.derive(before, after, URL)
    assert snap.busy_slots_per_decode == pytest.approx(5.0)
    assert snap.slots_busy == 10 and snap.window_steps == 500 and snap.window_tokens == 2 * 200 + 2 * 100
    window = base.window_delta(vllm.counters(before), vllm.counters(after))
    assert window.busy_per_decode == pytest.approx(6 + 4)


def test_slots_are_max_num_seqs_on_each_engine(tmp_path: Path):
    metrics = promtext.parse(dp_page(tmp_path, BEFORE))
    snap = vllm.derive(None, vllm.RawPoll(0.0, metrics=metrics, config=CONFIG), URL)
    assert snap.slots_total == 128 * 2
    no_dp_in_config = {"scheduler_config": {"max_num_seqs": 128}}  # the engines on the page say 2
    assert (
        vllm.derive(None, vllm.RawPoll(0.0, metrics=metrics, config=no_dp_in_config), URL).slots_total == 256
    )
    stats_off = vllm.RawPoll(0.0, config={**CONFIG, "parallel_config": {"data_parallel_size": 4}})
    assert vllm.derive(None, stats_off, URL).slots_total == 128 * 4


def per_step(before: vllm.RawPoll, after: vllm.RawPoll) -> float | None:
    return vllm_dp.requests_per_step(before.metrics, after.metrics, after.config, after.step_latency_name())


def three_servers(at: float, steps: float, itl: float) -> list[ApiServer]:
    # --api-server-count 3 over DP 2: every API server sees every step of both engines
    return [
        ApiServer(
            pid, (half(steps, itl, 2), half(steps, itl, 2)), stats_at=at + pid, kv_cache_usage=0.1 * pid
        )
        for pid in (1, 2, 3)
    ]


def test_pid_labels_count_the_api_servers_on_0_11(tmp_path: Path):
    # 0.11's kv_cache_usage_perc is in multiprocess mode `all`: one series per API server
    before = vllm.RawPoll(
        0.0, metrics=promtext.parse(dp_page(tmp_path / "a", three_servers(0, 100, 200), "0.11.0"))
    )
    after = vllm.RawPoll(
        1.0, metrics=promtext.parse(dp_page(tmp_path / "b", three_servers(5, 110, 220), "0.11.0"))
    )
    assert vllm_dp.pids(after.metrics) == {"1", "2", "3"}
    # 2 engines × 10 steps, 6 requests a step (2 from each API server): 120 request-steps over 20 steps
    assert per_step(before, after) == pytest.approx(120 / 20)
    assert vllm_dp.gauge_total(after.metrics, "vllm:kv_cache_usage_perc") == pytest.approx(
        2 * 0.3
    )  # max, not sum


def test_the_dev_config_names_a_hand_set_api_server_count(tmp_path: Path):
    pages = [
        promtext.parse(dp_page(tmp_path / n, three_servers(t, s, i)))
        for n, t, s, i in (("a", 0, 100, 200), ("b", 5, 110, 220))
    ]
    config = {**CONFIG, "parallel_config": {"data_parallel_size": 2, "_api_process_count": 3}}
    before, after = (
        vllm.RawPoll(t, metrics=m, config=config) for t, m in zip((0.0, 1.0), pages, strict=True)
    )
    assert per_step(before, after) == pytest.approx(6.0)


def test_one_api_server_pages_keep_their_stamps_and_divide_by_one():
    engines = [VllmEngine(steps=10, itl=30), VllmEngine(steps=10, itl=20)]
    grown = [VllmEngine(steps=20, itl=90), VllmEngine(steps=20, itl=60)]
    before, after = (
        vllm.RawPoll(t, metrics=promtext.parse(vllm_page(e))) for t, e in ((0.0, engines), (1.0, grown))
    )
    assert (
        vllm_dp.single_process(after.metrics)
        and vllm_dp.api_servers(None, after.metrics, vllm.STEPS_HISTOGRAM) == 1
    )
    assert per_step(before, after) == pytest.approx(100 / 20)
