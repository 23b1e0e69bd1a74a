"""A window's energy ends come from meter marks only when the marks are fresh; the server's own
counters bracket the window on any dialect that has them, so its flags hold there too."""

from __future__ import annotations

import time

import pytest

from collectors.meters.base import MeterReading
from collectors.requests.client import RequestSpec
from collectors.servers import default_route, open_collector
from collectors.servers.base import window_delta
from collectors.sweep import checks, measure
from collectors.sweep.codec import to_json
from tests.support.fake_servers import FakeVllm, VllmEngine, mock_client
from tests.support.streaming import run_with
from tests.support.sweep_rows import as_point

URL = "http://127.0.0.1:8000"


async def test_fresh_marks_become_the_energy_window():
    window = await run_with(lambda: MeterReading(time.monotonic(), 1.0, 10.0))
    assert window.energy_t0_s is not None and window.energy_t0_s <= window.t0_s
    assert window.energy_t1_s is not None and window.energy_t1_s >= window.t1_s
    figures = to_json(measure.window_figures(window))
    assert figures["committed_tokens"] == 96 and figures["drafted"] == 38 and figures["accepted"] == 30


async def test_a_throttled_meter_answering_with_an_old_reading_is_ignored():
    stale = MeterReading(time.monotonic() - 5.0, 1.0, 10.0)
    window = await run_with(lambda: stale)
    assert window.energy_t0_s is None and window.energy_t1_s is None
    assert (await run_with(None)).energy_t0_s is None


async def vllm_point(
    per_request: VllmEngine, batch: int = 4, tokens: int = 16, arm: str = "plain", **fake_options
) -> tuple[dict, list[str]]:
    """One measured point of `batch` requests on a fake vLLM, with the flags it earns."""
    fake = FakeVllm([VllmEngine(running=batch, per_pos=(0, 0, 0))], per_request=per_request, **fake_options)
    fake.answer_tokens = tokens
    async with mock_client(fake) as client:
        collector = open_collector(URL, "vllm", client=client)
        spec = RequestSpec(max_tokens=tokens, route=default_route("vllm"), dialect="vllm")
        window = await measure.measure(client, URL, [spec] * batch, collector, lambda: False, tag="t")
    row = to_json(measure.window_figures(window)) | {
        "batch": batch,
        "arm": arm,
        "energy_covered": True,
        "short_window": False,
        "meter_update_period_s": 0.1,
    }
    return row, [f.code for f in checks.point_flags(as_point(row), tokens, "counter")]


async def test_a_vllm_point_that_ran_the_whole_batch_alone_earns_no_flags():
    # each of 4 requests: 16 tokens, 4 engine steps shared by all 4, 16 request-steps of its own
    row, codes = await vllm_point(VllmEngine(generated=16, steps=4, itl=16, running=4, per_pos=(0, 0, 0)))
    assert row["committed_tokens"] == row["server_tokens"] == 64
    assert row["server_busy_per_decode"] == pytest.approx(4.0) and row["concurrency_mean"] == 4.0
    assert "concurrency" not in codes and "other-traffic" not in codes


async def test_a_vllm_point_flags_a_short_batch_and_other_traffic_from_its_counters():
    # the engine stepped twice as often (2 requests per step) and generated 4 tokens more per request;
    # its running gauge says 4 all along, so only the counters can tell
    drafting = VllmEngine(
        generated=20, steps=8, itl=16, drafts=5, draft_tokens=15, accepted=9, running=4, per_pos=(5, 3, 1)
    )
    row, codes = await vllm_point(drafting)
    assert row["server_busy_per_decode"] == pytest.approx(2.0)
    assert row["server_tokens"] == 80 and row["committed_tokens"] == 64
    assert (row["server_drafted"], row["server_accepted"], row["server_drafted_steps"]) == (60, 36, 20)
    assert row["server_steps"] == 64  # every step: the step-latency histogram's observations
    assert "concurrency" in codes and "other-traffic" in codes


# each request of 16 tokens: its first from prefill, then 5 steps of 3 (one drafted nothing and
# 4 drafted 3 each), 10 drafts accepted; 4 requests share 5 engine steps
DRAFTING = VllmEngine(
    generated=16, itl=5, drafts=4, draft_tokens=12, accepted=10, steps=5 / 4, running=4, per_pos=(4, 3, 3)
)


async def test_vllm_without_per_request_metrics_takes_drafting_from_its_counters():
    row, codes = await vllm_point(DRAFTING, arm="draft", answer_burst=3)
    assert (row["drafted"], row["accepted"], row["steps"]) == (48, 40, 20)
    assert row["drafting_source"] == "server counters" and row["steps_exact"]
    assert row["mean_advance"] == pytest.approx(1 + 40 / 20)  # not 1.00 from missing counts
    assert row["verified_width"] == pytest.approx(1 + 48 / 20)
    assert row["acceptance"] == pytest.approx(40 / 48)
    assert not {"void", "drafting-unknown", "steps-inferred", "other-traffic"} & set(codes)


async def test_vllm_without_any_counts_is_drafting_unknown_not_void():
    row, codes = await vllm_point(DRAFTING, arm="draft", answer_burst=3, stats_off=True)
    assert row["drafted"] is None and row["accepted"] is None and row["steps"] is None
    assert row["acceptance"] is None and row["verified_width"] is None
    assert row["mean_advance"] == pytest.approx(15 / 5)  # 3 tokens a chunk after the first, flagged
    assert not row["steps_exact"] and row["drafting_source"] is None
    assert "void" not in codes and {"drafting-unknown", "steps-inferred"} <= set(codes)


async def test_a_draft_point_known_to_have_drafted_nothing_is_void():
    row, codes = await vllm_point(
        VllmEngine(generated=16, itl=15, steps=15 / 4, running=4, per_pos=(0, 0, 0)), arm="draft", spec=False
    )
    assert (row["drafted"], row["accepted"], row["steps"]) == (0, 0, 60)
    assert row["mean_advance"] == 1.0 and "void" in codes and "drafting-unknown" not in codes


def test_other_traffic_allows_for_counters_printed_rounded():
    row = {"server_tokens": 50, "server_tokens_tolerance": 10, "committed_tokens": 48}
    assert checks.other_traffic_flag(as_point(row)) is None
    assert checks.other_traffic_flag(as_point(row | {"committed_tokens": 30})).code == "other-traffic"
    assert checks.other_traffic_flag(as_point(row | {"server_tokens_tolerance": 0})).code == "other-traffic"


async def test_a_data_parallel_vllm_reads_the_batch_over_all_engines():
    # two engines, each stepping 4 times with 2 requests: 4 requests ran at once, not 2
    fake = FakeVllm([VllmEngine(), VllmEngine()])
    async with mock_client(fake) as client:
        collector = open_collector(URL, "vllm", client=client)
        before = await collector.window_counters()
        fake.engines = [e.plus(VllmEngine(steps=4, itl=8)) for e in fake.engines]
        after = await collector.window_counters()
    assert window_delta(before, after).busy_per_decode == pytest.approx(4.0)
