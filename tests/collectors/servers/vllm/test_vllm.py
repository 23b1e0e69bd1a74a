"""The vLLM collector on pages with vLLM's exact names (collectors/docs/servers.md), several engines, and restarts."""

from __future__ import annotations

import pytest

from collectors.servers.vllm import collector as vllm
from tests.support.fake_servers import (
    MODEL,
    VLLM_REFERENCE_PAGE,
    FakeVllm,
    VllmEngine,
    mock_client,
    vllm_page,
)
from tests.support.polls import vllm_raw as raw
from tests.support.vllm_engines import D0, D1, E0, E1

URL = "http://127.0.0.1:8000"


def test_the_reference_excerpt_reads_as_the_reference_says():
    snap = vllm.derive(None, raw(VLLM_REFERENCE_PAGE, 0.0), URL)
    assert snap.backend == "vllm" and snap.model == MODEL
    # one poll: no window, so no window figures; the lifetime ones under their own names
    assert snap.acceptance is None and snap.mean_advance is None and snap.survival == ()
    assert snap.acceptance_lifetime == pytest.approx(0.60)
    assert snap.mean_advance_lifetime == pytest.approx(1 + 1800 / 1000)  # 1000 step-latency observations
    assert (snap.steps_total, snap.drafted_steps_total) == (1000, 1000)
    assert (snap.slots_busy, snap.requests_processing, snap.requests_deferred) == (8, 8, 0)
    assert snap.tokens_predicted_total == 2900  # the _created stamp (1.8e9) is not a token count
    assert snap.drafting is True and snap.spec_types == "k=3"
    assert snap.window_s is None and snap.live_tok_s is None


def test_two_engines_summed_before_dividing():
    prev = raw(vllm_page([E0, E1]), 10.0)
    cur = raw(vllm_page([E0.plus(D0), E1.plus(D1)]), 12.0)
    snap = vllm.derive(prev, cur, URL)
    assert not snap.restarted
    assert snap.window_s == pytest.approx(2.0)
    assert snap.window_tokens == 360 and snap.live_tok_s == pytest.approx(180.0) and snap.live_tok_s_exact
    assert (snap.window_drafted, snap.window_accepted) == (360, 230)
    # every step (100 + 30), not only the 120 that drafted
    assert (snap.window_steps, snap.window_drafted_steps) == (130, 120)
    assert snap.acceptance == pytest.approx(230 / 360)  # not the mean of 200/300 and 30/60
    assert snap.mean_advance == pytest.approx(1 + 230 / 130)
    assert snap.advance_per_drafted_step == pytest.approx(1 + 230 / 120)
    assert snap.verified_width == pytest.approx(1 + 360 / 130)
    assert snap.window_per_position == (110, 78, 42)
    assert snap.survival == pytest.approx((110 / 130, 78 / 130, 42 / 130))
    assert 1 + sum(snap.survival) == pytest.approx(snap.mean_advance)
    assert not snap.window_approximate
    assert snap.busy_slots_per_decode == pytest.approx((100 + 30) / (25 + 10))
    assert (snap.slots_busy, snap.requests_deferred) == (7, 2)
    assert snap.tokens_predicted_total == 2900 + 700 + 360
    assert (snap.drafted_total, snap.accepted_total, snap.drafted_steps_total) == (4260, 2330, 1420)
    assert snap.steps_total == 1000 + 380 + 130
    assert snap.mean_advance_lifetime == pytest.approx(1 + 2330 / 1510)
    assert snap.per_position_total == (1110, 758, 462)


def test_an_engine_that_appears_counts_from_zero():
    prev = raw(vllm_page([E0]), 0.0)
    cur = raw(vllm_page([E0.plus(D0), D1]), 1.0)
    snap = vllm.derive(prev, cur, URL)
    assert snap.window_tokens == 360 and snap.window_steps == 130


@pytest.mark.parametrize("created", [vllm_page.__defaults__[0], None], ids=["single-server", "multiprocess"])
def test_counters_going_backwards_mean_a_restart(created):
    prev = raw(vllm_page([E0.plus(D0)], created=created), 0.0)
    cur = raw(vllm_page([D0], created=created), 1.0)
    snap = vllm.derive(prev, cur, URL)
    assert snap.restarted
    assert snap.window_tokens is None and snap.live_tok_s is None and snap.acceptance is None
    assert snap.acceptance_lifetime == pytest.approx(200 / 300)


def test_a_new_created_stamp_is_a_restart_even_when_counters_grew():
    prev = raw(vllm_page([E0]), 0.0)
    cur = raw(vllm_page([E0.plus(D0)], created=vllm_page.__defaults__[0] + 60), 1.0)
    assert vllm.derive(prev, cur, URL).restarted


def test_a_plain_server_drafts_nothing():
    snap = vllm.derive(
        raw(vllm_page([E0], spec=False), 0.0), raw(vllm_page([E0.plus(D0)], spec=False), 1.0), URL
    )
    assert snap.drafting is False
    # no spec series: nothing was drafted (0, not unknown), so each of the 100 steps committed one
    assert (snap.window_drafted, snap.window_accepted, snap.window_steps) == (0, 0, 100)
    assert snap.acceptance is None and snap.survival == ()
    assert snap.mean_advance == 1.0 and snap.verified_width == 1.0
    assert snap.window_tokens == 300


def test_a_drafting_server_without_accepted_counts_has_no_g():
    # V0 (0.6.x) gauges say it drafts; without the counters nothing says what was accepted
    gauge = (
        "# HELP vllm:spec_decode_draft_acceptance_rate Speulative token acceptance rate.\n"
        "# TYPE vllm:spec_decode_draft_acceptance_rate gauge\n"
        'vllm:spec_decode_draft_acceptance_rate{model_name="m"} 0.6\n'
    )
    prev, cur = vllm_page([E0], spec=False) + gauge, vllm_page([E0.plus(D0)], spec=False) + gauge
    snap = vllm.derive(raw(prev, 0.0), raw(cur, 1.0), URL)
    assert snap.drafting is True and snap.window_steps is None  # V0: no window count is trusted
    assert snap.window_accepted is None and snap.mean_advance is None and snap.verified_width is None
    assert snap.acceptance is None and snap.acceptance_lifetime == 0.6  # the gauge is lifetime


def test_older_names_are_mapped():
    page = vllm_page([E0], old_names=True) + (
        "# HELP vllm:spec_decode_draft_acceptance_rate Speulative token acceptance rate.\n"
        "# TYPE vllm:spec_decode_draft_acceptance_rate gauge\n"
        'vllm:spec_decode_draft_acceptance_rate{model_name="m"} 0.6\n'
    )
    later = vllm_page([E0.plus(D0)], old_names=True)
    snap = vllm.derive(raw(page, 0.0), raw(later, 1.0), URL)
    assert snap.busy_slots_per_decode == pytest.approx(100 / 25)  # time_per_output_token_seconds, ≤0.11
    assert snap.window_steps == 100
    assert vllm.drafting(raw(page, 0.0)) is True


async def test_collector_polls_and_reads_identity_once():
    fake = FakeVllm([E0, E1], step=[D0, D1], dev_mode=True)
    collector = vllm.VllmCollector(URL, client=mock_client(fake))
    first = await collector.poll()
    second = await collector.poll()
    assert first.ok and first.window_s is None and first.drafting
    assert second.window_tokens == 360 and second.acceptance == pytest.approx(230 / 360)
    assert second.build == "0.33.0" and second.slots_total == 256 * 2 and second.n_ctx_slot == 8192
    assert second.spec_types == "eagle3 k=3"
    assert fake.hits["/version"] == 1 and fake.hits["/server_info"] == 1 and fake.hits["/metrics"] == 2
    assert await collector.busy_slots() == 6 + 1  # gauges as of the latest step
    await collector.aclose()


async def test_without_dev_mode_slots_total_is_unknown():
    snap = await vllm.VllmCollector(URL, client=mock_client(FakeVllm([E0]))).poll()
    assert snap.slots_total is None and snap.slots_busy == 8 and snap.model == MODEL


async def test_stats_off_says_so_and_falls_back_to_the_config():
    fake = FakeVllm([E0], stats_off=True, dev_mode=True)
    snap = await vllm.VllmCollector(URL, client=mock_client(fake)).poll()
    assert snap.ok and "--disable-log-stats" in snap.metrics_status
    assert snap.drafting is True  # speculative_config in /server_info
    assert snap.model == MODEL  # from /v1/models
    assert snap.slots_busy is None and snap.acceptance is None and snap.slots_status.startswith("unknown")


async def test_metrics_refused_is_reported():
    fake = FakeVllm([E0], metrics_status=401)
    collector = vllm.VllmCollector(URL, client=mock_client(fake))
    snap = await collector.poll()
    assert "API key" in snap.metrics_status and snap.drafting is None
    assert await collector.busy_slots() is None


async def test_unreachable():
    snap = await vllm.VllmCollector("http://127.0.0.1:9").poll()
    assert snap.status == "unreachable" and "vllm serve" in snap.fix


async def test_window_counters_need_the_engine_series():
    engine = VllmEngine(generated=100, drafts=10, draft_tokens=30, accepted=20, per_pos=(9, 7, 4), itl=75)
    counters = await vllm.VllmCollector(URL, client=mock_client(FakeVllm([engine]))).window_counters()
    assert counters is not None and (counters.tokens, counters.drafted, counters.accepted) == (100, 30, 20)
    assert (counters.steps, counters.drafted_steps) == (75, 10)  # every step, and those that drafted
    plain = FakeVllm([engine], spec=False)
    counters = await vllm.VllmCollector(URL, client=mock_client(plain)).window_counters()
    assert counters is not None and (counters.drafted, counters.accepted, counters.steps) == (0, 0, 75)
    stats_off = FakeVllm([VllmEngine()], stats_off=True)
    assert await vllm.VllmCollector(URL, client=mock_client(stats_off)).window_counters() is None
