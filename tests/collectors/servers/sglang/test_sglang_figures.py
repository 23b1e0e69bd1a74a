"""Every field of an SGLang snapshot, worked by hand from the fake's ranks and tokenizer counters."""

from __future__ import annotations

import math
from dataclasses import replace

import httpx
import pytest

from collectors import promtext
from collectors.servers.base import Probe
from collectors.servers.histograms import Histogram
from collectors.servers.latency import LatencyCounters
from collectors.servers.sglang import collector as sglang
from tests.support.fake_servers import MODEL, json_answer, mock_client
from tests.support.fake_sglang import FakeSglang, server_info, sglang_page
from tests.support.polls import R0, R1, TOK
from tests.support.polls import sglang_raw as raw

URL = "http://127.0.0.1:30000"


def test_one_poll_of_two_dp_ranks_field_by_field():
    snap = sglang.derive(None, raw(sglang_page([R0, R1], TOK), 2.0, info=server_info(dp=2)), URL)
    assert snap == sglang.SglangSnapshot(
        url=URL,
        backend="sglang",
        taken_at_s=2.0,
        status="ok",
        model=MODEL,
        build="0.5.23",
        slots_total=2 * 48,  # internal_states, one per DP rank
        slots_busy=6 + 2,
        n_ctx_slot=8192,
        drafting=True,
        spec_types="EAGLE3 steps=3 topk=1 draft_tokens=4",
        draft_tokens=3,  # speculative_num_steps: the length a schedule sets
        requests_processing=6 + 2,
        requests_deferred=1 + 0,
        tokens_predicted_total=2900 + 100,
        steps_total=1000,
        # the gauges weighted by each rank's running requests: (2.8·6 + 2.0·2) / 8, (0.6·6 + ⅓·2) / 8
        accept_length_gauge=pytest.approx(2.6),
        accept_rate_gauge=pytest.approx((3.6 + 2 / 3) / 8),
        accept_length_lifetime=pytest.approx(2.71),
        verify_width_tokens=4,
        kv_cache_usage=pytest.approx((0.5 + 0.25) / 2),  # the ranks' token_usage, a mean
        # the fake's tokenizer: 10 streamed TTFTs ≤ 0.1 s (0.7 s in all), 2,900 token gaps ≤ 2 ms (21 s),
        # 12,000 prompt tokens, and no cached-token, request or abort counter yet (so 0)
        latency_counters=LatencyCounters(
            histograms={
                "ttft": Histogram((0.1, 0.25, math.inf), (10, 10, 10), 0.7),
                "itl": Histogram((0.002, 0.008, math.inf), (2900, 2900, 2900), 21.0),
            },
            cache_queried_tokens=12000,
            cache_hit_tokens=0,
            finished={"completed": 0, "abort": 0},
        ),
        itl_observations_total=2900,  # the fake's inter-token latency count
    )


def gauges(**values: float) -> str:
    """An SGLang page of scheduler gauges, `name_rank=value`, one dp_rank per suffix."""
    lines = []
    for key, value in values.items():
        name, _, rank = key.rpartition("_")
        lines.append(f'sglang:{name}{{dp_rank="{rank}"}} {value}\n')
    return "".join(lines)


def gauge(page: str, name: str) -> float | None:
    return sglang.weighted_gauge(raw(page, 0.0), f"sglang:{name}")


def test_gauges_are_weighted_by_running_requests_and_averaged_when_idle():
    # one request running on rank 0 only: rank 0's figure
    assert (
        gauge(
            gauges(
                spec_accept_length_0=2.0, spec_accept_length_1=3.0, num_running_reqs_0=1, num_running_reqs_1=0
            ),
            "spec_accept_length",
        )
        == 2.0
    )
    # nothing running: the plain mean of the ranks
    assert (
        gauge(
            gauges(
                spec_accept_length_0=2.0, spec_accept_length_1=3.0, num_running_reqs_0=0, num_running_reqs_1=0
            ),
            "spec_accept_length",
        )
        == 2.5
    )
    assert (
        gauge(gauges(spec_accept_length_0=2.0, spec_accept_length_1=3.0), "spec_accept_length") == 2.5
    )  # no running gauge
    # a rank without a running gauge weighs nothing
    assert (
        gauge(
            gauges(spec_accept_length_0=2.0, spec_accept_length_1=4.0, num_running_reqs_0=2),
            "spec_accept_length",
        )
        == 2.0
    )


def test_drafting_from_loads_verify_calls_or_the_length_gauge():
    def drafting(page: str = "", loads=None) -> bool | None:
        return sglang.drafting(sglang.RawPoll(0.0, metrics=promtext.parse(page), loads=loads))

    assert drafting(loads=[{"num_running_reqs": 1, "speculative": {"accept_length": 2.0}}]) is True
    assert drafting("sglang:spec_verify_calls_total 1\n") is True
    assert drafting(gauges(spec_accept_length_0=1.0)) is True
    assert drafting(gauges(spec_accept_length_0=0.0)) is None  # no sign either way
    assert drafting(gauges(num_running_reqs_0=1)) is None


def test_width_from_the_live_gauge_else_the_server_args():
    info = server_info()  # speculative_num_draft_tokens 4
    assert sglang._width(raw(gauges(spec_num_draft_tokens_0=6), 0.0, info=info)) == 6  # adaptive
    assert sglang._width(raw(gauges(num_running_reqs_0=1), 0.0, info=info)) == 4


@pytest.mark.parametrize(("length", "done"), [(1.0, True), (1.5, True), (0.0, False)])
def test_the_40_iteration_window_is_done_once_the_length_gauge_reads_1(length, done):
    loads = [{"num_running_reqs": 1, "speculative": {"accept_length": 2.2, "accept_rate": 0.25}}]
    page = gauges(spec_accept_length_0=length, spec_accept_rate_0=0.5, num_running_reqs_0=1)
    # a 0.5.11+ server (the rate means acceptance) whose width is not known: the rate as it is
    snap = sglang.derive(None, raw(page, 0.0, info={"version": "0.5.23"}, loads=loads), URL)
    assert snap.accept_length_gauge == (length if done else None)
    assert snap.accept_rate_gauge == (0.5 if done else 0.25)  # until then, /v1/loads' figure


def test_identity_prefers_the_served_name_and_the_loads_limit():
    info = {**server_info(), "served_model_name": "served", "model_path": "/models/x"}
    loads = [{"num_running_reqs": 1, "max_running_requests": 32}]
    snap = sglang.derive(None, sglang.RawPoll(0.0, info=info, loads=loads), URL)
    assert (snap.model, snap.slots_total) == ("served", 32)
    labelled = sglang.derive(None, raw('sglang:num_running_reqs{model_name="m"} 1\n', 0.0), URL)
    assert labelled.model == "m"  # no /server_info: the series' label


PAGE = sglang_page([R0], TOK)
LATER = sglang_page([replace(R0, decode_tokens=R0.decode_tokens + 250)], TOK)


def test_no_window_unless_both_polls_answered_with_metrics():
    cases = [
        (sglang.RawPoll(0.0), raw(LATER, 1.0)),
        (raw(PAGE, 0.0), sglang.RawPoll(1.0, status="error", metrics=promtext.parse(LATER))),
        (sglang.RawPoll(0.0, status="error", metrics=promtext.parse(PAGE)), raw(LATER, 1.0)),
    ]
    for prev, cur in cases:
        assert sglang.derive(prev, cur, URL).window_s is None


def test_window_live_rate_and_the_older_servers_counter():
    half = sglang.derive(raw(PAGE, 0.0), raw(LATER, 0.5), URL)
    assert (half.window_s, half.window_tokens, half.live_tok_s) == (0.5, 250, 500.0)
    assert half.live_tok_s_exact is False
    assert sglang.derive(raw(PAGE, 1.0), raw(LATER, 1.0), URL).live_tok_s is None
    older = sglang.derive(
        raw("sglang:generation_tokens_total 100\n", 0.0),
        raw("sglang:generation_tokens_total 160\n", 2.0),
        URL,
    )
    assert older.window_tokens == 60 and older.live_tok_s == 30.0  # finished requests only
    none = sglang.derive(
        raw("sglang:num_running_reqs 1\n", 0.0), raw("sglang:num_running_reqs 1\n", 1.0), URL
    )
    assert none.window_tokens is None and none.live_tok_s is None


def test_restart_by_counter_totals_or_startup_time():
    def restarted(before: str, after: str, a=None, b=None) -> bool:
        def info(t: float | None) -> dict | None:
            return None if t is None else {"startup_time": t}

        return sglang.restarted(raw(before, 0.0, info=info(a)), raw(after, 1.0, info=info(b)))

    total = 'sglang:realtime_tokens_total{mode="decode",priority=""} %d\n'
    copy = 'sglang:realtime_tokens_total{mode="decode",priority="1"} %d\n'
    # the per-priority copy went back while the total grew: requests moved between priorities
    assert not restarted(total % 100 + copy % 50, total % 120 + copy % 10)
    assert restarted(total % 100, total % 90)
    assert restarted(total % 1, total % 1, 100.0, 200.0)
    assert not restarted(total % 1, total % 1, 100.0, 100.0)
    assert not restarted(total % 1, total % 1, None, 200.0)
    assert not restarted(total % 1, total % 1, 100.0, None)


def only(answers: dict[str, tuple[int, str, bytes]]):
    def routes(path: str, query: dict[str, str]):
        return answers.get(path, (404, "application/json", b"{}"))

    return routes


@pytest.mark.parametrize(
    "answers",
    [
        {"/server_info": json_answer({"internal_states": []})},
        {"/server_info": json_answer({"speculative_algorithm": None})},
        {"/get_server_info": json_answer({"internal_states": []})},  # before 0.5.6
        {"/v1/models": json_answer({"data": [{"id": "m", "owned_by": "sglang"}]})},
        {"/metrics": (200, "text/plain", b"sglang:num_running_reqs 1\n")},
    ],
)
async def test_any_one_endpoint_says_sglang(answers):
    assert await sglang.SglangCollector.answers(Probe(URL, mock_client(only(answers))))


async def test_a_metrics_error_page_naming_sglang_is_not_sglang():
    answers = {"/metrics": (500, "text/plain", b"sglang: internal error")}
    assert not await sglang.SglangCollector.answers(Probe(URL, mock_client(only(answers))))


def server(routes) -> sglang.SglangCollector:
    return sglang.SglangCollector(URL, client=mock_client(routes))


async def test_fetch_says_what_the_server_answered():
    ok = await server(FakeSglang([R0], TOK)).poll()
    assert ok.slots_status == "ok" and ok.url == URL
    for status, state, error in [
        (503, "loading", "the server is starting, shutting down or unhealthy (/health answered 503)"),
        (500, "error", "/health answered HTTP 500"),
    ]:

        def sick(path: str, query: dict[str, str], status=status):
            return (status, "text/plain", b"") if path == "/health" else FakeSglang([R0], TOK)(path, query)

        snap = await server(sick).poll()
        assert (snap.status, snap.error) == (state, error)

    def junk(path: str, query: dict[str, str]):
        return (200, "text/plain", b"{junk") if path == "/metrics" else FakeSglang([R0], TOK)(path, query)

    assert (await server(junk).poll()).metrics_status.startswith("unreadable: ")


async def test_an_unreachable_server_is_named():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    collector = sglang.SglangCollector(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(refuse)))
    gone = await collector.poll()
    assert gone.error == f"cannot reach {URL} (ConnectError)" and isinstance(gone.taken_at_s, float)


async def test_busy_slots_asks_loads_for_its_core_section_only():
    asked = []

    def routes(path: str, query: dict[str, str]):
        asked.append((path, query))
        if path == "/v1/loads":
            return json_answer({"loads": [{"num_running_reqs": 3}, {"num_running_reqs": 0}]})
        return 404, "text/plain", b""

    assert await server(routes).busy_slots() == 3
    assert asked == [("/v1/loads", {"include": "core"})]
    idle = only({"/v1/loads": json_answer({"loads": [{"num_running_reqs": 0}]})})
    assert await server(idle).busy_slots() == 0


def test_a_server_that_does_not_draft_has_no_width_and_no_lifetime_g_whatever_its_page_says():
    snap = sglang.derive(None, raw(sglang_page([R0, R1], TOK), 2.0, info=server_info(dp=2)), URL)
    assert (snap.verified_width, snap.mean_advance_lifetime) == (4.0, pytest.approx(2.71))
    # a plain server (speculative_algorithm None) with a drafting figure left on its page
    plain = replace(snap, drafting=False)
    assert (plain.verified_width, plain.mean_advance_lifetime, plain.acceptance) == (None, None, None)
    unknown = replace(snap, drafting=None)  # not said: the figures stand
    assert (unknown.verified_width, unknown.mean_advance_lifetime) == (4.0, pytest.approx(2.71))
