"""The llama-server collector on real captures, and on a server that lacks endpoints."""

from __future__ import annotations

import httpx
import pytest

from collectors import promtext
from collectors.servers.base import window_delta
from collectors.servers.llamacpp import collector as llamacpp
from tests.support.captures import PREFIXES, raw, read_json, read_text

URL = "http://127.0.0.1:8080"


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("stage", ["before", "busy", "after"])
def test_every_metrics_capture_parses(prefix, stage):
    samples = promtext.parse(read_text(f"{prefix}.metrics.{stage}.txt"))
    assert len([n for n in samples if n.startswith("llamacpp:") and "per_pos" not in n]) == 15


def test_identity_and_drafting_from_real_draft_server():
    snap = llamacpp.derive(None, raw("draft-simple", "before", "idle", 0.0), URL)
    assert snap.model == "tiny-target.gguf"
    assert snap.build == read_json("draft-simple.props.json")["build_info"]
    assert snap.slots_total == 4 and snap.slots_busy == 0
    assert snap.drafting is True
    assert snap.spec_types == "none,draft-simple"
    # one poll has no window: its figures are unknown, not the lifetime counters under their names
    assert snap.acceptance is None and snap.mean_advance is None and snap.survival == ()
    # lifetime: 73 accepted of 104 drafted; 97 steps drafted, but the steps that drafted nothing are
    # not counted anywhere, so llama-server has no lifetime G
    assert snap.acceptance_lifetime == pytest.approx(73 / 104)
    assert snap.drafted_steps_total == 97 and snap.steps_total is None and snap.mean_advance_lifetime is None
    assert snap.per_position_total == (66, 7, 0, 0)


@pytest.mark.parametrize("prefix", ["plain", "void"])
def test_plain_and_void_servers_do_not_draft(prefix):
    snap = llamacpp.derive(None, raw(prefix, "after", "idle", 0.0), URL)
    assert snap.drafting is False
    assert snap.acceptance is None and snap.mean_advance is None and snap.acceptance_lifetime is None
    assert snap.drafted_total == 0


def test_window_deltas_between_real_scrapes():
    before = raw("draft-simple", "before", "idle", 10.0)
    busy = raw("draft-simple", "busy", "busy", 12.0)
    snap = llamacpp.derive(before, busy, URL)
    assert snap.window_s == pytest.approx(2.0)
    assert (snap.window_drafted, snap.window_accepted, snap.window_drafted_steps) == (
        176 - 104,
        137 - 73,
        133 - 97,
    )
    assert snap.acceptance == pytest.approx(64 / 72)
    assert snap.window_per_position == (34, 24, 4, 2)
    # every step of the finished requests: 192 tokens, less one prefill token per finished request
    # (slot 1 ran task 463 and is idle), less 64 accepted; slots 0, 1 and 3 changed task, so a
    # request may have run unseen between the polls: the count is marked approximate
    assert snap.window_finished == 1 and snap.window_steps == 192 - 1 - 64
    assert not snap.window_steps_exact and snap.window_approximate
    assert snap.mean_advance == pytest.approx(1 + 64 / 127)
    assert snap.advance_per_drafted_step == pytest.approx(1 + 64 / 36)
    assert snap.survival[0] == pytest.approx(34 / 127)
    assert snap.slots_busy == 2
    # in flight: slot 0 (new task, 0 decoded) and slot 3 (new task, 49 decoded); finished: 616 - 424
    assert snap.window_tokens == 49 + (616 - 424)
    assert snap.live_tok_s == pytest.approx(snap.window_tokens / 2.0)
    assert snap.live_tok_s_exact
    # cumulative average undone: (1.00192*521 - 1*351) / (521 - 351)
    assert snap.busy_slots_per_decode == pytest.approx((1.00192 * 521 - 351) / 170)


def test_live_tokens_count_running_slots_without_metrics():
    prev = llamacpp.RawPoll(
        0.0, slots=[{"id": 0, "id_task": 7, "is_processing": True, "next_token": [{"n_decoded": 10}]}]
    )
    cur = llamacpp.RawPoll(
        0.5, slots=[{"id": 0, "id_task": 7, "is_processing": True, "next_token": [{"n_decoded": 40}]}]
    )
    snap = llamacpp.derive(prev, cur, URL)
    assert snap.live_tok_s == pytest.approx(60.0)
    assert not snap.live_tok_s_exact


def test_finished_request_completed_from_counter():
    prev = llamacpp.RawPoll(
        0.0,
        slots=[{"id": 0, "id_task": 7, "is_processing": True, "next_token": [{"n_decoded": 10}]}],
        metrics=promtext.parse("llamacpp:tokens_predicted_total 100\n"),
    )
    cur = llamacpp.RawPoll(
        1.0,
        slots=[{"id": 0, "id_task": 7, "is_processing": False, "next_token": [{"n_decoded": 0}]}],
        metrics=promtext.parse("llamacpp:tokens_predicted_total 164\n"),
    )
    snap = llamacpp.derive(prev, cur, URL)
    assert snap.window_tokens == 54  # the request ended at 64 tokens; 10 were already counted


def test_restart_resets_the_window():
    prev = raw("draft-simple", "after", "idle", 0.0)
    cur = raw("draft-simple", "before", "idle", 1.0)  # counters went backwards
    snap = llamacpp.derive(prev, cur, URL)
    assert snap.restarted and snap.window_tokens is None and snap.live_tok_s is None


def not_supported(endpoint: str) -> httpx.Response:
    """llama-server's answer for an endpoint it was started without (--no-slots, no --metrics)."""
    message = f"This server does not support {endpoint} endpoint. Start it with `--{endpoint}`"
    return httpx.Response(501, json={"error": {"code": 501, "message": message}})


def fake_server(metrics_status: int = 200, slots_status: int = 200, health_status: int = 200):
    prefix = "draft-simple"

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if health_status == 503:  # loading: every endpoint answers so (server-http.cpp L307-326)
            error = {"message": "Loading model", "type": "unavailable_error", "code": 503}
            return httpx.Response(503, json={"error": error})
        if path == "/health":
            return httpx.Response(health_status, json={"status": "ok"})
        if path == "/props":
            return httpx.Response(200, json=read_json(f"{prefix}.props.json"))
        if path == "/slots":
            if slots_status == 501:
                return not_supported("slots")
            return httpx.Response(200, json=read_json(f"{prefix}.slots.idle.json"))
        if path == "/metrics":
            if metrics_status == 501:
                return not_supported("metrics")
            return httpx.Response(
                200,
                text=read_text(f"{prefix}.metrics.after.txt"),
                headers={"Process-Start-Time-Unix": "1248659510"},
            )
        return httpx.Response(404)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_collector_polls_all_endpoints():
    collector = llamacpp.LlamaCppCollector(URL, client=fake_server())
    first = await collector.poll()
    second = await collector.poll()
    assert first.ok and first.drafting and first.window_s is None
    assert second.window_s is not None and second.window_tokens == 0
    await collector.aclose()


async def test_missing_metrics_and_slots_degrade_with_the_fix():
    collector = llamacpp.LlamaCppCollector(URL, client=fake_server(metrics_status=501, slots_status=501))
    snap = await collector.poll()
    assert snap.ok
    assert snap.metrics_status == "not available: start the server with --metrics"
    assert "--no-slots" in snap.slots_status
    assert snap.drafting is None and snap.acceptance is None
    assert snap.model == "tiny-target.gguf"


async def test_loading_and_unreachable():
    loading = await llamacpp.LlamaCppCollector(URL, client=fake_server(health_status=503)).poll()
    assert loading.status == "loading"
    gone = await llamacpp.LlamaCppCollector("http://127.0.0.1:9").poll()
    assert gone.status == "unreachable" and "--server" in gone.fix


async def test_window_counters_give_the_same_window_as_two_snapshots():
    pages = iter(["before", "busy"])

    def metrics(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=read_text(f"draft-simple.metrics.{next(pages)}.txt"))

    collector = llamacpp.LlamaCppCollector(
        URL, client=httpx.AsyncClient(transport=httpx.MockTransport(metrics))
    )
    window = window_delta(await collector.window_counters(), await collector.window_counters())
    snap = llamacpp.derive(
        raw("draft-simple", "before", "idle", 0.0), raw("draft-simple", "busy", "busy", 1.0), URL
    )
    assert (window.drafted, window.accepted, window.drafted_steps) == (72, 64, 36)
    assert (window.drafted, window.accepted, window.drafted_steps) == (
        snap.window_drafted,
        snap.window_accepted,
        snap.window_drafted_steps,
    )
    assert window.steps is None  # every step needs the finished requests, which /metrics lacks
    assert not window.rounded and window.tokens_tolerance == 0
    assert window.tokens == 616 - 424  # finished requests only: llama-server counts at the end
    assert window.busy_per_decode == snap.busy_slots_per_decode == pytest.approx((1.00192 * 521 - 351) / 170)
    off = llamacpp.LlamaCppCollector(URL, client=fake_server(metrics_status=501))
    assert await off.window_counters() is None
