"""The SGLang collector: windowed gauges as gauges, live tokens from the realtime counter, no
double counting across tp_rank or priority copies, and the endpoints an older or metric-less
server lacks."""

from __future__ import annotations

import pytest

from collectors.export import json_forms
from collectors.servers.base import window_delta
from collectors.servers.sglang import collector as sglang
from tests.support.fake_servers import MODEL, mock_client
from tests.support.fake_sglang import (
    SGLANG_REFERENCE_PAGE,
    FakeSglang,
    SglangRank,
    SglangTokenizer,
    server_info,
    sglang_page,
)
from tests.support.polls import R0, R1, TOK
from tests.support.polls import sglang_raw as raw

URL = "http://127.0.0.1:30000"


def test_the_reference_excerpt_and_server_info_fragment():
    snap = sglang.derive(None, raw(SGLANG_REFERENCE_PAGE, 0.0, info=server_info()), URL)
    assert isinstance(snap, sglang.SglangSnapshot) and snap.backend == "sglang"
    assert snap.drafting is True and snap.spec_types == "EAGLE3 steps=3 topk=1 draft_tokens=4"
    # the 40-iteration gauges, as they are; one poll has no window to show them for
    assert snap.accept_rate_gauge == pytest.approx(0.6) and snap.accept_length_gauge == pytest.approx(2.8)
    assert snap.acceptance is None and snap.mean_advance is None
    assert snap.verified_width == pytest.approx(4.0)
    assert snap.accept_length_lifetime == snap.mean_advance_lifetime == pytest.approx(2.71)
    assert snap.survival == ()
    assert snap.drafted_total is None and snap.accepted_total is None  # no counter pair exists
    assert snap.steps_total == 1000 and snap.tokens_predicted_total == 2900
    assert snap.slots_busy == 8 and snap.slots_total == 48
    # no /v1/models and no sglang:context_len here, and server_info's context_length is None by default
    assert (snap.model, snap.build, snap.n_ctx_slot) == (MODEL, "0.5.23", None)


def test_two_polls_with_dp_ranks_tp_copies_and_priority():
    step = [
        SglangRank(decode_tokens=300, running=6, accept_length=2.8, accept_rate=0.6),
        SglangRank(decode_tokens=100, running=2, accept_length=2.0, accept_rate=1 / 3),
    ]
    later = [
        SglangRank(
            r.decode_tokens + s.decode_tokens, r.prefill_tokens, s.running, 0, s.accept_length, s.accept_rate
        )
        for r, s in zip([R0, R1], step, strict=True)
    ]
    tok_later = SglangTokenizer(3100, 100, 1080, 12500)
    page = sglang_page([R0, R1], TOK, tp_copies=2, priority=True)
    snap = sglang.derive(
        raw(page, 5.0), raw(sglang_page(later, tok_later, tp_copies=2, priority=True), 7.0), URL
    )
    assert not snap.restarted
    assert snap.window_tokens == 400  # decode tokens of both DP ranks, once per tp_rank, priority="" only
    assert snap.live_tok_s == pytest.approx(200.0) and not snap.live_tok_s_exact
    assert snap.window_steps == 80  # verify calls of requests that finished
    assert snap.window_drafted is None and snap.window_accepted is None and snap.window_per_position == ()
    assert snap.slots_busy == 8 and snap.requests_deferred == 0
    # each rank's gauge weighted by its running requests: (2.8*6 + 2.0*2) / 8
    assert snap.mean_advance == pytest.approx((2.8 * 6 + 2.0 * 2) / 8)
    assert snap.acceptance == pytest.approx((0.6 * 6 + 1 / 3 * 2) / 8)
    assert snap.tokens_predicted_total == 3200


def test_a_counter_going_backwards_is_a_restart():
    prev = raw(sglang_page([R0], TOK), 0.0)
    cur = raw(sglang_page([SglangRank(decode_tokens=10)], SglangTokenizer()), 1.0)
    snap = sglang.derive(prev, cur, URL)
    assert snap.restarted and snap.window_tokens is None and snap.live_tok_s is None


def test_gauges_before_the_first_40_iterations_are_unknown_and_lifetime_has_its_own_name():
    page = sglang_page([SglangRank(running=1)], SglangTokenizer())  # accept_length 0 until 40 iterations
    later = sglang_page([SglangRank(running=1, decode_tokens=30)], SglangTokenizer())
    snap = sglang.derive(raw(page, 0.0, info=server_info()), raw(later, 1.0, info=server_info()), URL)
    assert snap.window_tokens == 30
    assert snap.acceptance is None and snap.mean_advance is None
    assert snap.mean_advance_lifetime == pytest.approx(2.71)


def test_an_idle_window_does_not_show_the_last_busy_gauges():
    page = sglang_page([R0], TOK)  # the gauges keep their last values while nothing decodes
    snap = sglang.derive(raw(page, 0.0), raw(page, 1.0), URL)
    assert snap.window_tokens == 0 and snap.accept_length_gauge == pytest.approx(2.8)
    assert snap.acceptance is None and snap.mean_advance is None


def test_a_plain_server_drafts_nothing():
    page = sglang_page([R0], TOK, spec=False)
    snap = sglang.derive(None, raw(page, 0.0, info=server_info(spec=False, accept_length=None)), URL)
    assert snap.drafting is False and snap.spec_types is None
    assert snap.acceptance is None and snap.mean_advance is None and snap.verified_width is None


def test_export_carries_the_gauges():
    later = SGLANG_REFERENCE_PAGE.replace(
        "} 2800.0\n# HELP sglang:generation", "} 2900.0\n# HELP sglang:generation"
    )
    snap = sglang.derive(
        raw(SGLANG_REFERENCE_PAGE, 0.0, info=server_info()), raw(later, 1.0, info=server_info()), URL
    )
    body = json_forms.snapshot_dict(snap)
    assert body["window_tokens"] == 100  # decoded: the gauges stand for the window
    assert body["acceptance"] == pytest.approx(0.6) and body["mean_advance"] == pytest.approx(2.8)
    assert body["accept_rate_gauge"] == pytest.approx(0.6) and body["verified_width"] == pytest.approx(4.0)
    assert body["mean_advance_lifetime"] == pytest.approx(2.71)


async def test_collector_polls_live_endpoints_and_reads_server_info_once():
    fake = FakeSglang(
        [R0],
        TOK,
        rank_step=[SglangRank(decode_tokens=250, running=5, queued=3, accept_length=3.1, accept_rate=0.7)],
        tok_step=SglangTokenizer(40, 0, 10, 0),
    )
    collector = sglang.SglangCollector(URL, client=mock_client(fake))
    first = await collector.poll()
    second = await collector.poll()
    assert first.ok and first.window_s is None and first.drafting
    assert second.window_tokens == 250 and second.window_steps == 10
    assert second.mean_advance == pytest.approx(3.1) and second.acceptance == pytest.approx(0.7)
    assert second.slots_busy == 5 and second.requests_deferred == 3 and second.slots_total == 48
    assert fake.hits["/server_info"] == 1 and fake.hits["/v1/loads"] == 2
    assert await collector.busy_slots() == 5
    await collector.aclose()


async def test_without_enable_metrics_loads_still_give_load_and_lifetime_length():
    fake = FakeSglang([R0], TOK, enable_metrics=False, lifetime_length=2.5)
    collector = sglang.SglangCollector(URL, client=mock_client(fake))
    snap = await collector.poll()
    assert snap.ok and snap.metrics_status == "not available: start SGLang with --enable-metrics"
    assert snap.slots_busy == 6 and snap.requests_deferred == 1
    assert snap.drafting is True
    assert snap.acceptance is None  # /v1/loads' accept_rate is 0 without --enable-metrics
    assert snap.mean_advance is None and snap.mean_advance_lifetime == pytest.approx(2.5)
    assert snap.live_tok_s is None and snap.window_tokens is None


async def test_an_older_server_without_loads():
    fake = FakeSglang([R0], TOK, old=True)
    collector = sglang.SglangCollector(URL, client=mock_client(fake))
    snap = await collector.poll()
    assert snap.build == "0.5.23" and snap.drafting is True  # from /get_server_info
    assert "0.5.8" in snap.slots_status
    assert snap.slots_busy == 6  # from sglang:num_running_reqs
    assert await collector.busy_slots() == 6


async def test_unreachable():
    snap = await sglang.SglangCollector("http://127.0.0.1:9").poll()
    assert snap.status == "unreachable" and "sglang.launch_server" in snap.fix


def test_odd_json_fields_read_as_unknown():
    info = {
        "speculative_algorithm": "EAGLE",
        "served_model_name": ["a", "b"],
        "model_path": "/models/x",
        "version": 5,
        "context_length": True,
        "max_running_requests": "48",
        "internal_states": ["junk", {"avg_spec_accept_length": "2.5"}],
    }
    loads = [{"num_running_reqs": "3", "speculative": {"accept_length": None}}]
    snap = sglang.derive(None, sglang.RawPoll(0.0, info=info, loads=loads), URL)
    assert snap.model == "/models/x" and snap.build is None and snap.n_ctx_slot is None
    assert snap.slots_total is None and snap.slots_busy is None and snap.mean_advance is None
    assert snap.drafting is True and snap.spec_types == "EAGLE"


async def test_window_counters_bracket_finished_requests_tokens_and_verify_calls():
    fake = FakeSglang([R0], TOK, tok_step=SglangTokenizer(40, 8, 10, 0))
    collector = sglang.SglangCollector(URL, client=mock_client(fake))
    before, after = await collector.window_counters(), await collector.window_counters()
    window = window_delta(before, after)
    assert (window.tokens, window.steps) == (48, 10)  # streaming and plain requests both count
    # acceptance is a 40-iteration gauge and nothing counts requests per step: no counter to bracket
    assert window.drafted is None and window.accepted is None and window.busy_per_decode is None
    metricless = sglang.SglangCollector(URL, client=mock_client(FakeSglang([R0], TOK, enable_metrics=False)))
    assert await metricless.window_counters() is None
