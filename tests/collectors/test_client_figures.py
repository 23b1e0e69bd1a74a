"""The streaming client: the body each dialect gets, and every field of the record from a replayed
capture on a scripted clock (so each time is the capture's own, not the test machine's)."""

from __future__ import annotations

import asyncio
import hashlib
import json

import httpx
import pytest

from collectors.requests.client import DEFAULT_PROMPT, RequestSpec, request_body, stream_request
from collectors.errors import ServerUnreachable, SpectopError
from tests.support.captures import read_json, sse_lines
from tests.support.streaming import capture, serving

URL = "http://127.0.0.1:8000"


def test_the_body_each_dialect_gets():
    assert request_body(RequestSpec()) == (
        "/completion",
        {
            "prompt": DEFAULT_PROMPT,
            "n_predict": 128,
            "stream": True,
            "temperature": 0.0,
            "ignore_eos": True,
            "timings_per_token": True,  # llama-server: exact counts and a step key on every event
        },
    )
    assert request_body(RequestSpec(prompt="hi", max_tokens=8, route="chat", model="m")) == (
        "/v1/chat/completions",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 8,
            "stream_options": {"include_usage": True, "continuous_usage_stats": False},
            "model": "m",
            "stream": True,
            "temperature": 0.0,
            "ignore_eos": True,
            "timings_per_token": True,
        },
    )
    path, body = request_body(RequestSpec(route="chat", dialect="sglang", ignore_eos=False, temperature=0.5))
    assert path == "/v1/chat/completions" and body["return_spec_tokens_details"] is True
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert "ignore_eos" not in body and "timings_per_token" not in body and "model" not in body
    assert body["temperature"] == 0.5
    _, vllm = request_body(RequestSpec(route="chat", dialect="vllm"))
    assert "return_spec_tokens_details" not in vllm and vllm["stream_options"]["continuous_usage_stats"]
    assert request_body(RequestSpec(id_slot=2))[1]["id_slot"] == 2  # llama-server runs it on slot 2
    assert "id_slot" not in request_body(RequestSpec(id_slot=2, dialect="vllm"))[1]  # nobody else knows it


class CaptureClock:
    """The send at 0 s, then each event's chunk at the time the capture saw it."""

    def __init__(self, name: str) -> None:
        times = [t for t, _ in sse_lines(name)]
        self.times = iter([0.0, *times, times[-1] + 0.001])

    def __call__(self) -> float:
        return next(self.times)


class EventChunks(httpx.AsyncByteStream):
    """A body that arrives one SSE event per chunk, as a server sends them."""

    def __init__(self, body: bytes) -> None:
        self.events = [event + b"\n\n" for event in body.split(b"\n\n") if event]

    async def __aiter__(self):
        for event in self.events:
            yield event


def replaying(body: bytes, seen: list[httpx.Request] | None = None, status: int = 200) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, stream=EventChunks(body), headers={"Content-Type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_a_replayed_draft_completion_field_by_field():
    name = "draft-simple.completion.sse.jsonl"
    seen: list[httpx.Request] = []
    async with replaying(capture(name), seen) as client:
        record = await stream_request(
            client,
            URL + "/",
            RequestSpec(max_tokens=48),
            api_key="k-1",
            tag="probe",
            clock=CaptureClock(name),
        )
    assert str(seen[0].url) == URL + "/completion" and seen[0].headers["Authorization"] == "Bearer k-1"
    assert (
        seen[0].method == "POST"
        and json.loads(seen[0].content) == request_body(RequestSpec(max_tokens=48))[1]
    )
    times = [t for t, _ in sse_lines(name)]
    content = read_json("draft-simple.completion.json")["content"]
    assert (record.server_url, record.route, record.tag) == (URL + "/", "/completion", "probe")
    assert (record.t_send_s, record.t_done_s) == (0.0, times[-1] + 0.001)
    assert [e.t_s for e in record.events] == times[:48]  # one event per token, at the capture's times
    assert (record.committed_tokens, record.prompt_tokens) == (48, 57)
    assert (record.draft_n, record.draft_n_accepted, record.server_steps) == (19, 15, 48 - 1 - 15)
    assert (record.finish_reason, record.model, record.error) == ("limit", "tiny-target.gguf", None)
    assert record.text_sha256 == hashlib.sha256(content.encode()).hexdigest()
    assert record.text_chars == len(content)
    assert record.latency.ttft_ms == pytest.approx(1000 * times[0])
    assert len(record.latency.burst_sizes) == 33  # drafting: 32 verify steps after the first token
    assert (
        record.tokens_per_event_exact and record.concurrency_mean is None and record.concurrency_max is None
    )


async def test_each_request_gets_its_own_id_and_a_cut_stream_says_so():
    cut = "".join(line + "\n\n" for _, line in sse_lines("draft-simple.completion.sse.jsonl")[:10]).encode()
    async with replaying(cut) as client:
        first = await stream_request(client, URL, RequestSpec())
        second = await stream_request(client, URL, RequestSpec())
    assert first.request_id != second.request_id and first.request_id.startswith("r")
    assert first.error == "stream ended early" and first.committed_tokens is None
    assert first.tag == ""


async def test_the_servers_own_error_and_inexact_chat_counts_reach_the_record():
    failed = b'data: {"error": {"code": 500, "message": "boom"}}\n\n'
    async with replaying(failed) as client:
        assert (await stream_request(client, URL, RequestSpec())).error == "boom"
    async with replaying(capture("draft-simple.chat.sse.jsonl")) as client:
        chat = await stream_request(client, URL, RequestSpec(route="chat"))
    assert chat.tokens_per_event_exact is False


@pytest.mark.parametrize(("draft_n", "steps"), [(0, 48), (1, 33)])
async def test_latency_steps_follow_whether_anything_was_drafted(draft_n, steps):
    # the same arrival times; a request that drafted nothing has one step per event, whatever the gaps
    name = "draft-simple.completion.sse.jsonl"
    body = capture(name).replace(b'"draft_n":19', b'"draft_n":%d' % draft_n)
    async with replaying(body) as client:
        record = await stream_request(client, URL, RequestSpec(max_tokens=48), clock=CaptureClock(name))
    assert record.draft_n == draft_n and len(record.latency.burst_sizes) == steps


async def test_a_plain_stream_is_one_step_per_event():
    name = "plain.completion.sse.jsonl"
    async with replaying(capture(name)) as client:
        record = await stream_request(client, URL, RequestSpec(max_tokens=48), clock=CaptureClock(name))
    assert record.draft_n is None and record.latency.burst_sizes == (1,) * 48


async def test_http_and_transport_failures_are_one_line_each():
    async with replaying(b"\xffslots busy" + b"." * 400, status=503) as client:
        with pytest.raises(SpectopError) as failed:
            await stream_request(client, URL, RequestSpec())
    # the body, undecodable bytes replaced, cut at 300 characters
    assert failed.value.what == f"{URL}/completion answered HTTP 503: \ufffdslots busy" + "." * 289
    assert failed.value.fix == "check the URL and the server's log"

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(ServerUnreachable) as gone:
            await stream_request(client, URL, RequestSpec(route="chat"))
    assert gone.value.what == f"cannot reach {URL} (ConnectError)"
    assert gone.value.fix == "start the server, or pass --server URL"


async def streamed_with_probe(body, busy):
    """One request streaming `body()` (an async generator) while `busy` answers the busy-slot reads."""
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body()))
    ) as client:
        return await stream_request(client, URL, RequestSpec(), busy_probe=busy)


async def test_busy_slots_are_sampled_while_the_request_streams():
    answers = iter([2, None, 4])
    three_asked = asyncio.Event()

    async def busy() -> int | None:
        answer = next(answers, 4)
        if answer == 4:
            three_asked.set()
        return answer

    async def body():
        # the stream lasts until the server has been asked three times (a broken sampler fails, not hangs)
        await asyncio.wait_for(three_asked.wait(), 10)
        yield capture("draft-simple.completion.sse.jsonl")

    record = await streamed_with_probe(body, busy)
    # an unanswered read is skipped: samples 2 and 4
    assert (record.concurrency_mean, record.concurrency_max) == (3.0, 4)


async def test_a_busy_probe_that_swallows_its_cancel_stops_with_the_request():
    # Python 3.11's wait_for (under every bounded page read) can swallow a cancellation that lands
    # as the read completes: the probe then returns a count as if never cancelled. A sampler stopped
    # by cancelling alone went on polling the server for good, and held up the event loop's shutdown
    asked = 0
    inside, swallowed = asyncio.Event(), asyncio.Event()

    async def busy() -> int | None:
        nonlocal asked
        asked += 1
        if asked == 1:  # the first read is under way when the request ends
            inside.set()
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                swallowed.set()
        return 3

    async def body():
        await asyncio.wait_for(inside.wait(), 10)
        yield capture("draft-simple.completion.sse.jsonl")

    record = await streamed_with_probe(body, busy)
    await asyncio.wait_for(swallowed.wait(), 10)  # the one cancel landed inside the probe and was lost
    asked_at_end = asked
    await asyncio.sleep(0.3)  # ten sampling periods: a sampler still running would ask again
    assert asked == asked_at_end
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert record.concurrency_max is None  # the one read ended after the request: not its sample


async def test_events_that_arrive_together_are_stamped_with_their_arrival_not_after_parsing():
    # a clock that moves on every read: a stamp taken after parsing the events before it would differ
    ticks = iter(range(100))
    body = "".join(line + "\n\n" for _, line in sse_lines("plain.completion.sse.jsonl")).encode()
    async with serving(body) as client:  # the whole stream in one chunk
        record = await stream_request(client, URL, RequestSpec(), clock=lambda: float(next(ticks)))
    assert record.t_send_s == 0.0 and len(record.events) > 3
    assert {e.t_s for e in record.events} == {1.0}  # the chunk's arrival, for every event in it
    assert record.latency.chunk_gaps.max_ms == 0.0
