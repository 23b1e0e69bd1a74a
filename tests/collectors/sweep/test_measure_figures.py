"""A sweep window's figures worked by hand from two hand-made requests, and the measuring loop's
handling of busy samples, failures and a cancel (the server is a mock; nothing here is timed)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.requests import latency
from collectors.requests.client import RequestSpec
from collectors.requests.latency import ChunkEvent
from collectors.requests.record import RequestRecord
from collectors.servers.base import WindowCounters, WindowDelta
from collectors.sweep import measure
from collectors.sweep.codec import to_json


def record(rid: str, t_send: float, times: list[float], drafted: bool, **counts) -> RequestRecord:
    events = tuple(ChunkEvent(t, 1) for t in times)
    return RequestRecord(
        request_id=rid,
        server_url="http://s",
        route="/completion",
        t_send_s=t_send,
        t_done_s=times[-1],
        events=events,
        latency=latency.profile(events, t_send, drafting=drafted),
        committed_tokens=len(times),
        finish_reason="length",
        text_sha256=rid * 4,
        **counts,
    )


# A: sent at 0, tokens at 0.1 (prefill), 0.2 and 0.2001 (one step: its own token and one accepted draft),
# 0.3 (a step whose two drafts were rejected): 4 tokens, 3 drafted, 1 accepted, 2 steps.
A = record("a", 0.0, [0.1, 0.2, 0.2001, 0.3], True, draft_n=3, draft_n_accepted=1, server_steps=2)
# B: a request that drafted nothing, sent at 0.05: tokens at 0.25 and 0.45, 1 step.
B = record("b", 0.05, [0.25, 0.45], False, server_steps=1)


def test_a_windows_figures_by_hand():
    window = measure.Window(
        0.0,
        0.5,
        [A, B],
        busy_samples=[1, 2, 2],
        before=WindowCounters(tokens=1000, drafted=500, accepted=200, steps=300, drafted_steps=100),
        after=WindowCounters(tokens=1006, drafted=503, accepted=201, steps=303, drafted_steps=102),
    )
    figures = to_json(measure.window_figures(window))
    requests = figures.pop("requests")
    assert figures == {
        "window_s": 0.5,
        "committed_tokens": 6,
        "drafted": 3,
        "accepted": 1,
        "steps": 3,
        "steps_exact": True,
        "drafting_source": "requests",
        "acceptance": pytest.approx(1 / 3),
        "mean_advance": pytest.approx(1 + 1 / 3),
        "verified_width": pytest.approx(1 + 3 / 3),
        "concurrency_mean": pytest.approx(5 / 3),
        "concurrency_max": 2,
        "ttft_ms_p50": pytest.approx(150.0),  # 100 and 200 ms
        # event gaps 100, 0.1, 99.9 (A) and 200 ms (B); numpy interpolates at index q/100 · 3
        "chunk_gap_ms_p50": pytest.approx(99.95),
        "chunk_gap_ms_p95": pytest.approx(185.0),
        "chunk_gap_ms_p99": pytest.approx(197.0),
        "chunk_gap_ms_max": pytest.approx(200.0),
        # step gaps: A's two bursts are 100 and 99.9 ms apart; B drafted nothing: its one gap, 200 ms
        "step_gap_ms_p95": pytest.approx(190.0),
        "step_gap_ms_p99": pytest.approx(198.0),
        "server_tokens": 6,
        "server_tokens_tolerance": 0,
        "server_drafted": 3,
        "server_accepted": 1,
        "server_steps": 3,
        "server_drafted_steps": 2,
        "server_busy_per_decode": None,
        "counters_rounded": False,
    }
    assert requests == [
        {
            "request_id": "a",
            "committed_tokens": 4,
            "draft_n": 3,
            "draft_n_accepted": 1,
            "steps": 2,
            "steps_exact": True,
            "ttft_ms": pytest.approx(100.0),
            "tok_s": pytest.approx(4 / 0.3),
            "finish_reason": "length",
            "text_sha256": "aaaa",
            "error": None,
        },
        {
            "request_id": "b",
            "committed_tokens": 2,
            "draft_n": None,
            "draft_n_accepted": None,
            "steps": 1,
            "steps_exact": True,
            "ttft_ms": pytest.approx(200.0),
            "tok_s": pytest.approx(2 / 0.4),
            "finish_reason": "length",
            "text_sha256": "bbbb",
            "error": None,
        },
    ]


def test_rounded_counters_and_the_servers_batch():
    rounded = {"tokens": 5.0}
    window = measure.Window(
        2.0,
        3.0,
        [B],
        busy_samples=[1],
        before=WindowCounters(tokens=2_000_000, request_steps=300.0, decode_steps=100.0, errors=rounded),
        after=WindowCounters(tokens=2_000_100, request_steps=330.0, decode_steps=110.0, errors=rounded),
    )
    figures = to_json(measure.window_figures(window))
    assert figures["counters_rounded"] and figures["server_tokens_tolerance"] == 10
    assert (
        figures["server_busy_per_decode"] == 3.0 and figures["concurrency_mean"] == 3.0
    )  # not the samples' 1
    assert figures["concurrency_max"] == 1 and figures["window_s"] == 1.0


def test_a_request_that_drafted_nothing_has_a_step_per_event_and_a_failed_one_no_tokens():
    # events 0.1 ms apart from a server that drafted nothing are two steps, not one burst
    plain = record("p", 0.0, [0.1, 0.1001, 0.3], False, server_steps=2)
    failed = RequestRecord(
        "f", "http://s", "/completion", 0.0, 0.2, (), latency.profile((), 0.0), None, error="boom"
    )
    figures = to_json(measure.window_figures(measure.Window(0.0, 0.3, [plain, failed])))
    assert figures["committed_tokens"] == 3
    assert figures["step_gap_ms_p95"] == pytest.approx(0.1 + 0.95 * 199.8)  # gaps 0.1 and 199.9 ms


def test_nothing_accepted_is_0_percent_and_no_counts_read_g_from_bursts():
    none_accepted = record("c", 0.0, [0.1, 0.2, 0.3], True, draft_n=4, draft_n_accepted=0, server_steps=2)
    figures = to_json(measure.window_figures(measure.Window(0.0, 0.3, [none_accepted])))
    assert figures["acceptance"] == 0.0 and figures["mean_advance"] == 1.0
    # no counts at all: bursts of 1, then 3 (0.2-0.2002), then 2 (0.3-0.3001): G = 1 + (3 + 2 - 2) / 2
    bursty = record("d", 0.0, [0.1, 0.2, 0.2001, 0.2002, 0.3, 0.3001], True)
    figures = to_json(measure.window_figures(measure.Window(0.0, 0.3, [bursty])))
    assert figures["steps"] is None and not figures["steps_exact"] and figures["drafting_source"] is None
    assert figures["mean_advance"] == pytest.approx(2.5)
    one_event = record("e", 0.0, [0.1], False, server_steps=0)
    figures = to_json(measure.window_figures(measure.Window(0.0, 0.1, [one_event])))
    assert figures["chunk_gap_ms_p50"] is None and figures["chunk_gap_ms_max"] is None
    assert figures["step_gap_ms_p95"] is None and figures["committed_tokens"] == 1


def test_drafting_counts_need_every_part():
    plain = record("p", 0.0, [0.1, 0.2], False, server_steps=1)
    assert measure.drafting_counts([plain], WindowDelta()) == (0, 0, 1, "requests")
    assert measure.drafting_counts([], WindowDelta(drafted=None, accepted=5, steps=10)) == (None,) * 4
    assert measure.drafting_counts([], WindowDelta(drafted=5, accepted=None, steps=None)) == (None,) * 4
    assert measure.drafting_counts([], WindowDelta(drafted=5, accepted=2, steps=4)) == (
        5,
        2,
        4,
        "server counters",
    )


URL = "http://127.0.0.1:8000"
STREAM = (
    'data: {"content": "a", "tokens_predicted": 1}\n\n'
    'data: {"content": "", "stop": true, "tokens_predicted": 1, "timings": {"predicted_n": 1}}\n\n'
)


class Busy:
    """A collector that answers busy slots from a script and has no counters."""

    def __init__(self, answers: list[int | None]) -> None:
        self.answers, self.asked = iter(answers), asyncio.Event()

    async def busy_slots(self) -> int | None:
        answer = next(self.answers, None)
        if answer is None:
            self.asked.set()
        return answer

    async def window_counters(self) -> WindowCounters | None:
        return None


def server(handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_busy_samples_are_taken_while_the_requests_run():
    collector = Busy([3, 4])

    async def body():
        await asyncio.wait_for(collector.asked.wait(), 10)  # until the sampler has had its answers
        yield STREAM.encode()

    async with server(lambda request: httpx.Response(200, content=body())) as client:
        window = await measure.measure(client, URL, [RequestSpec()], collector, lambda: False, tag="t")
    assert window.busy_samples == [3, 4] and window.cancelled is False
    assert [r.tag for r in window.records] == ["t"]


class BusyOnceSent(Busy):
    """Answers only once a request has reached the server, so every answer is taken while it runs."""

    def __init__(self, answers: list[int | None]) -> None:
        super().__init__(answers)
        self.sent = asyncio.Event()

    async def busy_slots(self) -> int | None:
        await self.sent.wait()
        return await super().busy_slots()


async def test_each_sweep_request_carries_its_batch_from_the_points_busy_samples():
    # the fault: sweep rows showed batch "—", the point's busy samples never reached its requests
    collector = BusyOnceSent([2, 3])

    async def body():
        await asyncio.wait_for(collector.asked.wait(), 10)  # both samples taken while it streams
        yield STREAM.encode()

    def handler(request: httpx.Request) -> httpx.Response:
        collector.sent.set()
        return httpx.Response(200, content=body())

    async with server(handler) as client:
        window = await measure.measure(client, URL, [RequestSpec()], collector, lambda: False, tag="t")
    (record,) = window.records
    assert (record.concurrency_mean, record.concurrency_max) == (2.5, 3)  # by hand: (2 + 3) / 2, max 3


async def test_a_sweep_request_no_busy_sample_saw_has_the_concurrency_it_was_sent_at():
    async with server(lambda request: httpx.Response(200, content=STREAM.encode())) as client:
        window = await measure.measure(client, URL, [RequestSpec()] * 2, None, lambda: False, tag="t")
    assert [(r.concurrency_mean, r.concurrency_max) for r in window.records] == [(2.0, 2), (2.0, 2)]


async def test_one_failed_request_leaves_the_others_and_all_failed_raises_the_first():
    def handler(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["prompt"]
        if prompt == "ok":
            return httpx.Response(200, text=STREAM)
        return httpx.Response(500, text=prompt)

    async with server(handler) as client:
        window = await measure.measure(
            client, URL, [RequestSpec(prompt="ok"), RequestSpec(prompt="first")], None, lambda: False, "t"
        )
        done = [r for r in window.records if r.error is None]
        failed = [r for r in window.records if r.error is not None]
        assert len(done) == 1 and done[0].committed_tokens == 1
        # the failed request stays in the window as a flagged record with no tokens
        assert (
            len(failed) == 1 and failed[0].committed_tokens is None and "HTTP 500: first" in failed[0].error
        )
        with pytest.raises(SpectopError, match="HTTP 500: first"):
            await measure.measure(
                client,
                URL,
                [RequestSpec(prompt="first"), RequestSpec(prompt="second")],
                None,
                lambda: False,
                "t",
            )


async def test_requests_running_when_nobody_stops_are_waited_for():
    asked = []
    release = asyncio.Event()

    def should_stop() -> bool:
        asked.append(1)
        if len(asked) == 2:
            release.set()
        return False

    async def body():
        await asyncio.wait_for(release.wait(), 10)
        yield STREAM.encode()

    async with server(lambda request: httpx.Response(200, content=body())) as client:
        window = await measure.measure(client, URL, [RequestSpec()], None, should_stop, tag="t")
    assert not window.cancelled and len(window.records) == 1


async def test_a_stop_cancels_what_still_runs_and_keeps_what_finished():
    never = asyncio.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["prompt"] == "quick":
            return httpx.Response(200, text=STREAM)

        async def body():
            await never.wait()
            yield b""

        return httpx.Response(200, content=body())

    counters = []

    class Counting(Busy):
        async def window_counters(self) -> WindowCounters | None:
            counters.append(1)
            return WindowCounters(tokens=1)

    async with server(handler) as client:
        window = await measure.measure(
            client,
            URL,
            [RequestSpec(prompt="quick"), RequestSpec(prompt="slow")],
            Counting([]),
            lambda: True,
            "t",
        )
    assert window.cancelled is True and [r.committed_tokens for r in window.records] == [1]
    assert window.after is None and counters == [1]  # read before, not after a cancelled window
    assert window.t1_s == window.records[0].t_done_s
    async with server(handler) as client:
        slow_first = [RequestSpec(prompt="slow"), RequestSpec(prompt="quick")]
        window = await measure.measure(client, URL, slow_first, None, lambda: True, "t")
        assert [r.committed_tokens for r in window.records] == [1]
        nothing = await measure.measure(client, URL, [RequestSpec(prompt="slow")], None, lambda: True, "t")
    assert nothing.cancelled is True and nothing.records == [] and nothing.t1_s >= nothing.t0_s


async def test_warm_up_sends_one_request():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, text=STREAM)

    async with server(handler) as client:
        await measure.warm_up(client, URL, RequestSpec(prompt="warm", max_tokens=4))
    assert [body["prompt"] for body in seen] == ["warm"] and seen[0]["n_predict"] == 4
