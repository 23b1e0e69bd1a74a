"""Property tests for every parser of server data: whatever a server sends, a parser returns a value
or raises SpectopError, never anything else; a poll always returns a snapshot whose fields have
their declared types (a float where an int is due breaks whoever formats it).

Inputs (tests/support/answer_strategies.py): for /props, /slots, /v1/loads, /server_info,
/version and /v1/models, JSON of the shape each dialect reads with one value of another type (a
bool, 3.5, NaN, 2**64, "3", a list…) and arbitrary JSON and bytes; arbitrary text and well-formed
pages with arbitrary values (NaN, infinities, 1e300, negative, odd labels) for /metrics; arbitrary
SSE lines and events of either stream's shape with one value wrong for the streams.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from collectors import promtext
from collectors.errors import SpectopError
from collectors.requests import streams
from collectors.requests.client import record_of
from collectors.servers import detect, open_collector
from collectors.servers.llamacpp import collector as llamacpp
from collectors.servers.llamacpp import stream as llamacpp_stream
from collectors.servers.snapshot import ServerSnapshot
from tests.support.answer_strategies import (
    FIELDS,
    LOADS_BODIES,
    MODELS_BODIES,
    PROPS_BODIES,
    SGLANG_INFO_BODIES,
    SLOTS_BODIES,
    SLOTS_VALID,
    VERSION_BODIES,
    VLLM_INFO_BODIES,
    metrics_pages,
    sse_lines,
)

pytestmark = pytest.mark.slow  # property tests: hundreds of generated answers per parser

SETTINGS = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
URL = "http://server.test"
INTS = (
    "slots_total",
    "slots_busy",
    "n_ctx_slot",
    "requests_processing",
    "requests_deferred",
    "window_tokens",
)
INTS += ("window_drafted", "window_accepted", "window_steps", "window_drafted_steps", "window_finished")
INTS += ("tokens_predicted_total", "drafted_total", "accepted_total", "steps_total", "drafted_steps_total")
TEXTS = ("model", "build", "spec_types", "error", "fix")


def well_typed(snap: ServerSnapshot) -> None:
    assert isinstance(snap, ServerSnapshot)
    for name in INTS:
        value = getattr(snap, name)
        assert value is None or (isinstance(value, int) and not isinstance(value, bool)), (name, value)
    for name in TEXTS:
        assert getattr(snap, name) is None or isinstance(getattr(snap, name), str), name
    assert all(isinstance(p, int) for p in snap.per_position_total)
    for figure in ("acceptance", "mean_advance", "verified_width", "acceptance_lifetime"):
        getattr(snap, figure)  # the properties compute without raising


def serving(answers: dict[str, list[tuple[int, bytes]]]) -> httpx.AsyncClient:
    """Answers by path, one per request in turn, the last repeating; 404 elsewhere."""

    def handler(request: httpx.Request) -> httpx.Response:
        queue = answers.get(request.url.path)
        if not queue:
            return httpx.Response(404)
        status, body = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(status, content=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def poll_twice(backend: str, answers: dict[str, list[tuple[int, bytes]]]) -> None:
    async def run() -> None:
        async with serving(answers) as client:
            collector = open_collector(URL, backend, client=client)
            well_typed(await collector.poll())
            well_typed(await collector.poll())
            await collector.busy_slots()
            await collector.window_counters()

    asyncio.run(run())


def ok(body: bytes) -> list[tuple[int, bytes]]:
    return [(200, body)]


@SETTINGS
@given(props=PROPS_BODIES, slots=SLOTS_VALID, before=metrics_pages, after=metrics_pages)
def test_llama_server_answers(props, slots, before, after):
    metrics = [(200, before.encode()), (200, before.encode()), (200, after.encode())]
    poll_twice(
        "llama.cpp", {"/health": ok(b"{}"), "/props": ok(props), "/slots": ok(slots), "/metrics": metrics}
    )


@SETTINGS
@given(slots_before=SLOTS_BODIES, slots_after=SLOTS_BODIES, before=metrics_pages, after=metrics_pages)
def test_llama_server_slots_of_every_shape_between_two_polls(slots_before, slots_after, before, after):
    metrics = [(200, before.encode()), (200, before.encode()), (200, after.encode())]
    slots = [(200, slots_before), (200, slots_after)]
    props = json.dumps({"total_slots": 2, "build_info": "b1"}).encode()
    poll_twice("llama.cpp", {"/health": ok(b"{}"), "/props": ok(props), "/slots": slots, "/metrics": metrics})


@SETTINGS
@given(info=SGLANG_INFO_BODIES, loads=LOADS_BODIES, before=metrics_pages, after=metrics_pages)
def test_sglang_answers(info, loads, before, after):
    metrics = [(200, before.encode()), (200, after.encode())]
    poll_twice(
        "sglang", {"/health": ok(b""), "/server_info": ok(info), "/v1/loads": ok(loads), "/metrics": metrics}
    )


@SETTINGS
@given(
    version=VERSION_BODIES,
    models=MODELS_BODIES,
    info=VLLM_INFO_BODIES,
    before=metrics_pages,
    after=metrics_pages,
)
def test_vllm_answers(version, models, info, before, after):
    metrics = [(200, before.encode()), (200, after.encode())]
    answers = {
        "/health": ok(b""),
        "/version": ok(version),
        "/v1/models": ok(models),
        "/server_info": ok(info),
    }
    poll_twice("vllm", {**answers, "/metrics": metrics})


@SETTINGS
@given(props=PROPS_BODIES, info=SGLANG_INFO_BODIES, models=MODELS_BODIES, metrics=metrics_pages)
def test_detection(props, info, models, metrics):
    answers = {
        "/props": ok(props),
        "/server_info": ok(info),
        "/v1/models": ok(models),
        "/metrics": ok(metrics.encode()),
    }

    async def run() -> None:
        async with serving(answers) as client:
            try:
                assert await detect(URL, client) in ("llama.cpp", "sglang", "vllm")
            except SpectopError:
                pass

    asyncio.run(run())


@SETTINGS
@given(text=st.text() | metrics_pages)
def test_metrics_text(text):
    try:
        parsed = promtext.parse(text)
    except SpectopError as exc:
        assert isinstance(exc, ValueError)  # what meters catch
        return
    assert all(isinstance(s.value, float) for rows in parsed.values() for s in rows)


@SETTINGS
@given(page=metrics_pages, pick=st.integers(min_value=1, max_value=3))
def test_reading_some_families_gives_what_the_whole_page_gives_of_them(page, pick):
    # a page read for some of its families (as a meter reads only power and energy) misses none of
    # their samples and adds none
    try:
        families = [f.name for f in text_string_to_metric_families(page)]
        whole = list(promtext.samples(page))
    except Exception:  # junk: test_metrics_text holds what junk does
        return
    prefixes = tuple(families[::pick])
    if not prefixes:
        return

    def seen(samples) -> list:
        return [(s.name, dict(s.labels), repr(s.value)) for s in samples]  # repr: NaN equals NaN

    wanted = seen(s for s in whole if s.name.startswith(prefixes))
    assert seen(promtext.samples(page, families=prefixes)) == wanted


@SETTINGS
@given(page=metrics_pages, keep_first=st.booleans())
def test_a_page_read_without_buckets_loses_only_buckets(page, keep_first):
    # a poll parses only the histogram buckets its dialect reads; every other sample is as before
    try:
        whole = [(s.name, dict(s.labels), repr(s.value)) for s in promtext.samples(page)]
    except SpectopError:
        return
    buckets = sorted({name[: -len("_bucket")] for name, _, _ in whole if name.endswith("_bucket")})
    keep = tuple(buckets[:1]) if keep_first else ()
    wanted = [s for s in whole if not s[0].endswith("_bucket") or s[0][: -len("_bucket")] in keep]
    read = [
        (s.name, dict(s.labels), repr(s.value))
        for s in promtext.samples(promtext.without_buckets(page, keep))
    ]
    assert read == wanted


@SETTINGS
@given(lines=st.lists(sse_lines, max_size=8), native=st.booleans())
def test_stream_lines(lines, native):
    state = streams.StreamState()
    for t_s, line in enumerate(lines):
        try:
            streams.feed_line(state, float(t_s), line, native)
        except SpectopError:
            break
    record = record_of(state, "r1", URL, "/completion", 0.0, float(len(lines)), [], "t")
    assert record.committed_tokens is None or isinstance(record.committed_tokens, int)
    assert record.model is None or isinstance(record.model, str)
    assert record.finish_reason is None or isinstance(record.finish_reason, str)
    record.mean_advance, record.acceptance, record.tok_s  # noqa: B018 - they compute without raising


def test_the_strategies_reach_the_fields_read():
    # a guard that the generated keys are the ones read: a renamed field would leave paths untried
    assert set(llamacpp.PROPS) <= set(FIELDS) and set(llamacpp_stream.TIMINGS) <= set(FIELDS)
