"""Every field of a vLLM snapshot and window, stated from the fake engines' counters by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import httpx
import pytest

from collectors.servers.snapshot import ServerSnapshot
from collectors.servers.vllm import collector as vllm
from collectors.servers.vllm import dp as vllm_dp
from tests.support.fake_servers import MODEL, FakeVllm, VllmEngine, json_answer, mock_client, vllm_page
from tests.support.polls import vllm_raw as raw
from tests.support.vllm_engines import D0, D1, E0, E1

URL = "http://127.0.0.1:8000"

CONFIG = {
    "model_config": {"max_model_len": 8192},
    "scheduler_config": {"max_num_seqs": 256},
    "speculative_config": {"method": "eagle3", "num_speculative_tokens": 3},
}
MODELS = [{"id": MODEL, "owned_by": "vllm", "max_model_len": 4096}]


def test_one_poll_of_two_engines_field_by_field():
    cur = raw(vllm_page([E0, E1]), 3.0, version="0.33.0", models=MODELS, config=CONFIG)
    snap = vllm.derive(None, cur, URL)
    latency = snap.latency_counters
    # the fake's engines: 10 TTFTs each, all ≤ 1 ms (0.7 s each); their step gaps (1000 and 380),
    # all ≤ 10 ms at 21 ms each on the sum; 3 requests each ended at their length; no cache counters
    assert latency is not None and set(latency.histograms) == {"ttft", "itl"}
    ttft, itl = latency.histograms["ttft"], latency.histograms["itl"]
    assert (ttft.bounds_s, ttft.counts, ttft.sum_s) == ((0.001, 0.08, 0.25, math.inf), (20, 20, 20, 20), 1.4)
    assert (itl.bounds_s, itl.counts) == ((0.01, 0.025, math.inf), (1380, 1380, 1380))
    assert itl.sum_s == pytest.approx(1380 * 0.021)
    assert latency.finished == {"stop": 0, "length": 3 + 3, "abort": 0, "error": 0, "repetition": 0}
    assert latency.cache_queried_tokens is None and latency.cache_hit_tokens is None
    assert replace(snap, latency_counters=None) == ServerSnapshot(
        url=URL,
        backend="vllm",
        taken_at_s=3.0,
        status="ok",
        model=MODEL,  # the series' model_name label
        build="0.33.0",
        slots_total=256 * 2,  # max_num_seqs on each of the page's two engines
        slots_busy=8 + 2,
        n_ctx_slot=4096,  # /v1/models before the config
        drafting=True,
        spec_types="eagle3 k=3",
        draft_tokens=3,  # num_speculative_tokens in the speculative config
        requests_processing=8 + 2,
        requests_deferred=1 + 0,
        tokens_predicted_total=2900 + 700,
        drafted_total=3000 + 900,
        accepted_total=1800 + 300,
        steps_total=1000 + 380,
        drafted_steps_total=1000 + 300,
        per_position_total=(800 + 200, 600 + 80, 400 + 20),
        kv_cache_usage=0.25,  # each engine's 0.25, a mean, never summed over engines
        metrics_status="ok",
        slots_status="ok",
    )


def test_identity_fallbacks_and_odd_answers():
    def ctx(models, config) -> int | None:
        return vllm._max_model_len(vllm.RawPoll(0.0, models=models, config=config))

    assert ctx(MODELS, CONFIG) == 4096
    assert ctx([{"id": MODEL}], CONFIG) == 8192  # not in /v1/models: the config's
    assert ctx(["odd"], CONFIG) == 8192
    assert ctx([{"max_model_len": "4096"}], None) is None  # not a number: unknown
    assert vllm_dp.max_num_seqs({"scheduler_config": {"max_num_seqs": "256"}}) is None
    for models in (["odd"], [{"id": ""}], [{"id": 5}]):
        assert vllm._model(vllm.RawPoll(0.0, models=models)) is None
    # k from the config, else from the per-position series; a config that is not an object is none
    five = vllm.RawPoll(0.0, config={"speculative_config": {"method": "ngram", "num_speculative_tokens": 5}})
    assert vllm.spec_types(five) == "ngram k=5"
    odd = raw(vllm_page([E0]), 0.0, config={"speculative_config": "SpeculativeConfig(method=eagle3)"})
    assert odd.spec_config() is None and vllm.spec_types(odd) == "k=3"


def test_eleven_positions_are_in_numeric_order():
    engine = VllmEngine(drafts=10, draft_tokens=110, accepted=66, per_pos=tuple(range(11, 0, -1)))
    assert raw(vllm_page([engine]), 0.0).per_position() == tuple(range(11, 0, -1))


def test_no_window_unless_both_polls_answered_with_metrics():
    page, later = vllm_page([E0, E1]), vllm_page([E0.plus(D0), E1.plus(D1)])
    cases = [
        (vllm.RawPoll(0.0), raw(later, 1.0)),  # no /metrics before
        (raw(page, 0.0), raw(later, 1.0, status="error")),
        (raw(page, 0.0, status="error"), raw(later, 1.0)),
    ]
    for prev, cur in cases:
        assert vllm.derive(prev, cur, URL).window_s is None


def test_live_rate_over_half_a_second_and_none_over_no_time():
    page, later = vllm_page([E0, E1]), vllm_page([E0.plus(D0), E1.plus(D1)])
    half = vllm.derive(raw(page, 0.0), raw(later, 0.5), URL)
    assert half.window_tokens == 360 and half.live_tok_s == pytest.approx(720.0)
    assert vllm.derive(raw(page, 1.0), raw(later, 1.0), URL).live_tok_s is None
    no_counter = "vllm:num_requests_running 1\n"
    snap = vllm.derive(raw(no_counter, 0.0), raw(no_counter, 1.0), URL)
    assert snap.window_tokens is None and snap.live_tok_s is None and not snap.live_tok_s_exact


def test_positions_new_in_the_window_count_from_zero():
    before = VllmEngine(generated=10, drafts=1, draft_tokens=2, accepted=1)  # no per-position series yet
    after = VllmEngine(generated=20, drafts=2, draft_tokens=4, accepted=3, per_pos=(2, 1))
    snap = vllm.derive(raw(vllm_page([before]), 0.0), raw(vllm_page([after]), 1.0), URL)
    assert snap.window_per_position == (2, 1)


def page_of(**counts: float) -> str:
    names = {
        "steps": "vllm:iteration_tokens_total_count",
        "itl": "vllm:inter_token_latency_seconds_count",
        "running": "vllm:num_requests_running",
    }
    return "".join(f'{names[k]}{{engine="0"}} {v}\n' for k, v in counts.items())


def test_requests_per_step_needs_both_histograms_and_a_step():
    def per_step(before: str, after: str) -> float | None:
        cur = raw(after, 1.0)
        return vllm_dp.requests_per_step(raw(before, 0.0).metrics, cur.metrics, None, cur.step_latency_name())

    assert per_step(page_of(steps=10, itl=20), page_of(steps=11, itl=23)) == 3.0  # one step, three requests
    assert per_step(page_of(steps=10, itl=20), page_of(steps=10, itl=20)) is None  # no step
    assert per_step(page_of(steps=10, running=1), page_of(steps=12, running=1)) is None  # no step latency
    assert per_step(page_of(itl=20), page_of(itl=23)) is None  # no step histogram
    counters = vllm.counters(raw(page_of(itl=20), 0.0))
    assert counters is not None and counters.decode_steps is None


def server(routes) -> vllm.VllmCollector:
    return vllm.VllmCollector(URL, client=mock_client(routes))


async def test_fetch_reads_odd_identity_answers_as_unknown():
    def routes(path: str, query: dict[str, str]):
        if path == "/version":
            return json_answer({"version": 5})
        if path == "/v1/models":
            return json_answer({"data": "none"})
        if path == "/server_info":
            return json_answer({"vllm_config": "none"})
        return FakeVllm([E0])(path, query)

    poll = await server(routes).fetch()
    assert poll.version is None and poll.models is None and poll.config is None


async def test_fetch_says_what_went_wrong():
    def sick(path: str, query: dict[str, str]):
        return (503, "text/plain", b"") if path == "/health" else FakeVllm([E0])(path, query)

    snap = await server(sick).poll()
    assert (snap.status, snap.error) == ("error", "/health answered HTTP 503: the engine is not healthy")
    assert snap.url == URL
    lost = await server(FakeVllm([E0], metrics_status=404)).poll()
    assert lost.metrics_status == "not found (HTTP 404): is --server the vLLM API server's port?"

    def junk(path: str, query: dict[str, str]):
        return (200, "text/plain", b"{not a page") if path == "/metrics" else FakeVllm([E0])(path, query)

    assert (await server(junk).poll()).metrics_status.startswith("unreadable: ")
    off = await server(FakeVllm([E0], stats_off=True)).poll()
    assert off.slots_status == "unknown: vLLM reports running requests on /metrics only"


async def test_an_unreachable_server_is_named():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    collector = vllm.VllmCollector(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(refuse)))
    gone = await collector.poll()
    assert gone.error == f"cannot reach {URL} (ConnectError)" and isinstance(gone.taken_at_s, float)
