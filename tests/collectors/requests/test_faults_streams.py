"""Malformed, endless, silent and broken streams end a request with one SpectopError that names the
endpoint, within bounds that grow with the tokens asked for; a sweep point keeps the requests that
failed as failed records, so it is flagged instead of measured as if fewer had been sent."""

from __future__ import annotations

import pytest

from collectors.errors import ServerUnreachable, SpectopError
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.requests.client import STREAM_LIMITS, RequestSpec, StreamLimits, stream_request
from collectors.sweep import checks, measure
from collectors.sweep.codec import to_json
from tests.support.fault_server import (
    Drop,
    FaultServer,
    Hang,
    Reply,
    Script,
    Stream,
    endless,
    events,
    llama_routes,
)
from tests.support.sweep_rows import as_point

TOKEN = {"content": "x", "tokens_predicted": 1, "stop": False}
STOP = {
    "content": "",
    "stop": True,
    "tokens_predicted": 8,
    "stop_type": "limit",
    "timings": {"predicted_n": 8},
}
QUICK = StreamLimits(base_s=1.0, seconds_per_token=0.0)  # a wall bound a test can wait for


async def probe(server: FaultServer, tokens: int = 8, limits: StreamLimits = STREAM_LIMITS):
    async with make_client(None, STREAM_TIMEOUT) as client:
        return await stream_request(client, server.url, RequestSpec(max_tokens=tokens), limits=limits)


@pytest.mark.parametrize(
    ("stream", "says"),
    [
        (events("42"), "/completion streamed an event that is not a JSON object: '42'"),
        (events("[1, 2]"), "streamed an event that is not a JSON object"),
        (events('"text"'), "streamed an event that is not a JSON object"),
        (events({**TOKEN, "tokens_predicted": "1"}), "a `tokens_predicted` that is not a whole number"),
        (events({**TOKEN, "content": 5}), "a `content` that is not text"),
        (events(TOKEN, {**STOP, "timings": []}), "a `timings` that is not an object"),
        (
            events({**STOP, "timings": {"predicted_n": 1e400}}),
            "`timings.predicted_n` that is not a whole number",
        ),
        (events({**STOP, "timings": {"predicted_ms": "NaN"}}), "`timings.predicted_ms` that is not a number"),
        (
            events('{"stop": true, "timings": {"predicted_ms": NaN}}'),
            "`timings.predicted_ms` that is not a number",
        ),
        (events({**STOP, "model": {"name": "m"}}), "a `model` that is not text"),
    ],
    ids=[
        "int",
        "list",
        "string",
        "count-as-text",
        "content-number",
        "timings-list",
        "huge",
        "nan-text",
        "nan",
        "model",
    ],
)
async def test_an_event_of_the_wrong_shape_is_an_error_naming_the_endpoint(stream, says):
    with FaultServer({"/completion": Stream(stream)}) as server:
        with pytest.raises(SpectopError) as caught:
            await probe(server)
    assert says in caught.value.what and caught.value.what.startswith(server.url + "/completion ")
    assert "--server" in caught.value.fix


@pytest.mark.parametrize(
    ("chunk", "says"),
    [
        (
            {"choices": [{"delta": {"content": ["x"]}}]},
            "a `choices[0].delta.content` that is not text",
        ),
        ({"choices": {"delta": {}}}, "a `choices` that is not a list"),
        ({"usage": {"completion_tokens": "8"}}, "a `usage.completion_tokens` that is not a whole number"),
        ({"metrics": {"speculative_decoding": {"num_spec_steps": [1]}}}, "num_spec_steps"),
        ({"sglext": {"spec_tokens_details": {"spec_verify_ct": True}}}, "spec_verify_ct"),
    ],
)
async def test_an_openai_chunk_of_the_wrong_shape_is_an_error(chunk, says):
    with FaultServer({"/v1/chat/completions": Stream(events(chunk))}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            with pytest.raises(SpectopError) as caught:
                await stream_request(client, server.url, RequestSpec(route="chat", dialect="vllm"))
    assert says in caught.value.what and "/v1/chat/completions streamed" in caught.value.what


async def test_nulls_in_a_stream_read_as_absent():
    chunks = events(
        {"choices": [{"delta": {"content": "hi"}, "finish_reason": None}], "usage": None},
        {"choices": [], "usage": {"completion_tokens": 1, "prompt_tokens": None}, "timings": None},
        "[DONE]",
    )
    with FaultServer({"/v1/chat/completions": Stream(chunks)}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            record = await stream_request(client, server.url, RequestSpec(route="chat", dialect="vllm"))
    assert record.ok and record.committed_tokens == 1


async def test_an_endless_stream_stops_at_its_event_bound():
    with FaultServer({"/completion": Stream(endless(TOKEN))}) as server:
        with pytest.raises(SpectopError, match=r"/completion sent more than 96 events for 8 tokens"):
            await probe(server)  # 64 + 4 × 8 events


async def test_a_line_that_never_ends_stops_at_its_byte_bound():
    limits = StreamLimits(base_bytes=64 << 10, bytes_per_token=0)
    line = lambda: iter(lambda: b"data: " + b"x" * 4096, None)  # noqa: E731
    with FaultServer({"/completion": Stream(line)}) as server:
        with pytest.raises(SpectopError, match=r"/completion sent more than 64 KB in one stream"):
            await probe(server, limits=limits)


def test_bounds_grow_with_what_was_asked():
    limits, short, long = StreamLimits(), RequestSpec(max_tokens=8), RequestSpec(max_tokens=512)
    assert limits.events(long) - limits.events(short) == 4 * (512 - 8)
    assert limits.bytes(long) > limits.bytes(short) and limits.seconds(long) > limits.seconds(short)
    assert limits.seconds(short, concurrent=16) > limits.seconds(short)  # a shared server decodes slower


async def test_a_slow_endless_stream_stops_at_its_time_bound():
    with FaultServer({"/completion": Stream(endless(TOKEN), delay_s=0.05)}) as server:
        with pytest.raises(SpectopError, match=r"/completion was still streaming after 1 s"):
            await probe(server, limits=QUICK)


async def test_a_stream_that_sends_nothing_stops_at_its_time_bound():
    with FaultServer({"/completion": Hang()}) as server:
        with pytest.raises(SpectopError, match=r"/completion was still streaming after 1 s") as caught:
            await probe(server, limits=QUICK)
    assert not isinstance(caught.value, ServerUnreachable)


async def test_an_endless_error_body_is_read_only_as_far_as_it_is_shown():
    body = Stream(lambda: iter(lambda: b"boom " * 1000, None), status=500, content_type="text/plain")
    with FaultServer({"/completion": body}) as server:
        with pytest.raises(SpectopError, match=r"/completion answered HTTP 500: boom boom"):
            await probe(server)


async def test_an_undecodable_stream_is_an_error():
    broken = Reply(
        b"\x1f\x8b not gzip", content_type="text/event-stream", headers={"Content-Encoding": "gzip"}
    )
    with FaultServer({"/completion": broken}) as server:
        with pytest.raises(SpectopError, match="/completion sent a body that cannot be decoded"):
            await probe(server)


async def test_bytes_that_are_not_utf8_are_replaced_not_fatal():
    chunks = lambda: iter([b'data: {"content": "\xff\xfe", "tokens_predicted": 1}\n\n', b"data: [DONE]\n\n"])  # noqa: E731
    with FaultServer({"/completion": Stream(chunks)}) as server:
        record = await probe(server)
    assert record.committed_tokens is None and record.text_chars == 2


async def test_a_connection_dropped_mid_stream_says_the_server_hung_up():
    with FaultServer({"/completion": Stream(events(TOKEN, TOKEN), drop=True)}) as server:
        with pytest.raises(SpectopError, match="/completion closed the connection before") as caught:
            await probe(server)
    assert not isinstance(caught.value, ServerUnreachable)


async def test_a_refused_stream_is_unreachable():
    server = FaultServer()
    server.stop()
    with pytest.raises(ServerUnreachable, match=f"cannot reach {server.url} "):
        await probe(server)


async def test_a_point_keeps_its_failed_requests_and_is_flagged():
    bad_then_good = Script(Stream(events("42")), llama_routes()["/completion"])
    with FaultServer({"/completion": bad_then_good}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            specs = [RequestSpec(max_tokens=48)] * 3
            window = await measure.measure(client, server.url, specs, None, lambda: False, tag="t")
    failed = [r for r in window.records if r.error]
    assert len(window.records) == 3 and len(failed) == 1
    assert "streamed an event that is not a JSON object" in failed[0].error
    figures = to_json(measure.window_figures(window))
    row = {**figures, **to_json(measure.energy_fields(None, 1.0, figures["committed_tokens"], None))}
    row.update(batch=3, arm="plain", concurrency_max=3)
    assert "request-errors" in {f.code for f in checks.point_flags(as_point(row), 48, "counter")}


async def test_a_point_whose_every_request_failed_raises():
    with FaultServer({"/completion": Drop()}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            with pytest.raises(SpectopError, match="closed the connection"):
                await measure.measure(
                    client, server.url, [RequestSpec(max_tokens=48)] * 2, None, lambda: False, tag="t"
                )
