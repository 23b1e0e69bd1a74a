"""Every field of a llama-server snapshot, read by hand from the real captures (tests/data/llama-server)."""

from __future__ import annotations

import copy

import httpx
import pytest

from collectors import promtext
from collectors.servers.base import Probe, WindowDelta
from collectors.servers.latency import LatencyCounters
from collectors.servers.llamacpp import collector as llamacpp
from collectors.servers.snapshot import ServerSnapshot
from tests.support.captures import raw, read_json, read_text
from tests.support.polls import llama_at as at
from tests.support.polls import llama_page as page

URL = "http://127.0.0.1:8080"


def test_one_poll_of_the_busy_server_field_by_field():
    snap = llamacpp.derive(None, raw("draft-simple", "busy", "busy", 12.0), URL)
    # draft-simple.props.json, .slots.busy.json (slots 0 and 3 busy, 0 and 49 decoded), .metrics.busy.txt
    assert snap == ServerSnapshot(
        url=URL,
        backend="llama.cpp",
        taken_at_s=12.0,
        status="ok",
        model="tiny-target.gguf",
        build="b0-unknown",
        slots_total=4,
        slots_busy=2,
        n_ctx_slot=1024,
        drafting=True,
        spec_types="none,draft-simple",
        requests_processing=4,
        requests_deferred=0,
        tokens_predicted_total=616,
        drafted_total=176,
        accepted_total=137,
        drafted_steps_total=133,
        per_position_total=(100, 31, 4, 2),
        busy_slot_tokens=((0, 0), (3, 49)),
        # .metrics.busy.txt: 169 prompt tokens processed, 445 more reused from the cache; no histograms
        latency_counters=LatencyCounters(cache_queried_tokens=169 + 445, cache_hit_tokens=445),
        counters_rounded=False,
    )


def test_identity_falls_back_where_the_server_leaves_a_field_out():
    props = read_json("draft-simple.props.json")
    props["model_alias"] = "alias"
    props["model_path"] = "/models/target.gguf"
    props["default_generation_settings"]["n_ctx"] = 2048
    del props["total_slots"]
    slots = read_json("draft-simple.slots.busy.json")
    with_alias = llamacpp.derive(None, llamacpp.RawPoll(1.0, props=props, slots=slots), URL)
    assert (with_alias.model, with_alias.slots_total, with_alias.n_ctx_slot) == ("alias", 4, 1024)
    del props["model_alias"]
    for s in slots:
        del s["n_ctx"]
    fallback = llamacpp.derive(None, llamacpp.RawPoll(1.0, props=props, slots=slots), URL)
    assert (fallback.model, fallback.n_ctx_slot) == ("/models/target.gguf", 2048)
    no_slots = llamacpp.derive(None, llamacpp.RawPoll(1.0, props=props, slots=None), URL)
    assert no_slots.slots_total is None and no_slots.slots_busy is None and no_slots.drafting is None


def test_per_position_counts_are_ordered_by_their_position_label():
    text = (
        'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="1"} 31\n'
        'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 100\n'
    )
    assert llamacpp.RawPoll(0.0, metrics=promtext.parse(text)).per_position() == (100, 31)


def metrics_poll(t_s: float, text: str, **kw) -> llamacpp.RawPoll:
    return llamacpp.RawPoll(t_s, metrics=promtext.parse(text), **kw)


@pytest.mark.parametrize(
    "counter", ["tokens_predicted_total", "n_decode_total", "spec_decode_num_draft_tokens_total"]
)
def test_any_counter_going_back_is_a_restart(counter):
    text = "".join(f"llamacpp:{name} 100\n" for name in llamacpp._AT_FINISH + ("n_decode_total",))
    went_back = text.replace(f"llamacpp:{counter} 100", f"llamacpp:{counter} 99")
    assert llamacpp.restarted(metrics_poll(0.0, text), metrics_poll(1.0, went_back))
    assert not llamacpp.restarted(metrics_poll(0.0, text), metrics_poll(1.0, text))


def test_a_new_process_start_stamp_is_a_restart():
    text = "llamacpp:tokens_predicted_total 100\n"
    prev = metrics_poll(0.0, text, process_start="1248659510")
    assert llamacpp.restarted(prev, metrics_poll(1.0, text, process_start="1248659999"))
    assert not llamacpp.restarted(prev, metrics_poll(1.0, text, process_start="1248659510"))


@pytest.mark.parametrize(
    "counter",
    [
        "tokens_predicted_total",
        "spec_decode_num_draft_tokens_total",
        "spec_decode_num_accepted_tokens_total",
    ],
)
def test_one_poll_says_its_counters_are_rounded(counter):
    rounded = llamacpp.derive(None, raw_page(at(page("before"), **{counter: 2_000_424}), 0.0), URL)
    assert rounded.counters_rounded
    assert not llamacpp.derive(None, raw_page(page("before"), 0.0), URL).counters_rounded


def raw_page(text: str, t_s: float, **kw) -> llamacpp.RawPoll:
    return llamacpp.RawPoll(t_s, metrics=promtext.parse(text), **kw)


def test_no_window_unless_both_polls_answered():
    before, after = raw("draft-simple", "before", "idle", 0.0), raw("draft-simple", "busy", "busy", 2.0)
    for prev, cur in [(before, _with(after, status="loading")), (_with(before, status="error"), after)]:
        snap = llamacpp.derive(prev, cur, URL)
        assert snap.window_s is None and snap.window_tokens is None and snap.live_tok_s is None


def _with(poll: llamacpp.RawPoll, **changes) -> llamacpp.RawPoll:
    out = copy.copy(poll)
    for k, v in changes.items():
        setattr(out, k, v)
    return out


def test_no_live_rate_over_no_time_or_no_count():
    same_instant = llamacpp.derive(
        raw("draft-simple", "before", "idle", 5.0), raw("draft-simple", "busy", "busy", 5.0), URL
    )
    assert same_instant.window_tokens == 49 + 192 and same_instant.live_tok_s is None
    nothing = llamacpp.derive(llamacpp.RawPoll(0.0), llamacpp.RawPoll(1.0), URL)
    assert nothing.window_tokens is None and nothing.live_tok_s is None


def test_per_position_growth_when_the_rows_differ_in_length():
    four = 'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="%d"} %d\n'
    prev = raw_page("".join(four % (j, 10) for j in range(2)), 0.0)  # the server knew two positions
    cur = raw_page("".join(four % (j, 15) for j in range(4)), 1.0)
    assert llamacpp.derive(prev, cur, URL).window_per_position == (5, 5, 15, 15)
    shorter = raw_page("".join(four % (j, 12) for j in range(2)), 2.0)
    wider = raw_page("".join(four % (j, 10) for j in range(4)), 1.0)
    assert llamacpp.derive(wider, shorter, URL).window_per_position == (2, 2)


def test_every_step_count_allows_for_both_reads_rounding():
    # 400 tokens of 10 requests with 90 accepted: 300 steps. Tokens and accepted past 10⁶ are each ±10
    # over the window (±5 per read): ±20 on 300 steps is more than 5 %; ±10 (tokens only) would not be.
    rounded = WindowDelta(
        tokens=400, accepted=90, drafted_steps=50, errors={"tokens": 10.0, "accepted": 10.0}
    )
    assert llamacpp.every_step_count(rounded, 10) is None
    exact_accepted = WindowDelta(
        tokens=400, accepted=90, drafted_steps=50, errors={"tokens": 10.0, "accepted": 0.0}
    )
    assert llamacpp.every_step_count(exact_accepted, 10) == 300


def test_requests_per_decode_needs_both_counters():
    poll = metrics_poll(0.0, "llamacpp:n_decode_total 351\n")
    assert llamacpp.counters(poll).request_steps is None
    poll = metrics_poll(0.0, "llamacpp:n_busy_slots_per_decode 1.5\n")
    assert llamacpp.counters(poll).request_steps is None


async def test_a_props_page_with_only_total_slots_is_llama_server():
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"total_slots": 4}))
    )
    assert await llamacpp.LlamaCppCollector.answers(Probe(URL, client))


def scripted(
    health: int = 200, metrics: list[int] | None = None, headers: dict | None = None, seen: list | None = None
):
    statuses = iter(metrics or [])

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if seen is not None:
            seen.append(path)
        if health == 503:  # loading: every endpoint answers so (server-http.cpp L307-326)
            return httpx.Response(503, json={"error": {"message": "Loading model", "code": 503}})
        if path == "/health":
            return httpx.Response(health, json={})
        if path == "/slots" and health != 200:  # broken: a proxy in front answers every path so
            return httpx.Response(health, json={})
        if path == "/props":
            return httpx.Response(200, json=read_json("draft-simple.props.json"))
        if path == "/slots":
            return httpx.Response(200, json=read_json("draft-simple.slots.busy.json"))
        status = next(statuses, 200)
        text = read_text("draft-simple.metrics.busy.txt") if status == 200 else "oops"
        return httpx.Response(status, text=text, headers=headers or {})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_fetch_says_what_the_server_answered():
    collector = llamacpp.LlamaCppCollector(
        URL, client=scripted(headers={"Process-Start-Time-Unix": "1248659510"})
    )
    raw_poll = await collector.fetch()
    assert raw_poll.process_start == "1248659510" and raw_poll.reads_agree
    snap = await collector.poll()
    assert snap.url == URL
    # /metrics answered once, then failed on the second read: the first read is kept, and unconfirmed
    collector = llamacpp.LlamaCppCollector(URL, client=scripted(metrics=[200, 500]))
    raw_poll = await collector.fetch()
    assert raw_poll.metric("tokens_predicted_total") == 616 and not raw_poll.reads_agree
    loading = await llamacpp.LlamaCppCollector(URL, client=scripted(health=503)).fetch()
    assert (loading.status, loading.error) == ("loading", "the server is loading its model")
    broken = await llamacpp.LlamaCppCollector(URL, client=scripted(health=500)).fetch()
    assert (broken.status, broken.error) == ("error", "/health answered HTTP 500")
    # a server that answers /slots is up: /health is not read (every endpoint is 503 until loaded)
    paths: list[str] = []
    collector = llamacpp.LlamaCppCollector(URL, client=scripted(seen=paths))
    assert (await collector.fetch()).status == "ok" and "/health" not in paths and "/slots" in paths


async def test_an_unreachable_server_is_named_with_the_time_of_the_poll():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    collector = llamacpp.LlamaCppCollector(
        URL, client=httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    )
    gone = await collector.poll()
    assert gone.status == "unreachable" and isinstance(gone.taken_at_s, float)
    assert gone.error == f"cannot reach {URL} (ConnectError)"
    assert await collector.busy_slots() is None


async def test_busy_slots_counts_the_slots_processing_now():
    collector = llamacpp.LlamaCppCollector(URL, client=scripted())
    assert await collector.busy_slots() == 2  # slots 0 and 3 of slots.busy.json
    off = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(501, json={})))
    assert await llamacpp.LlamaCppCollector(URL, client=off).busy_slots() is None
