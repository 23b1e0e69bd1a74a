"""A dialect with its own request format and an NDJSON stream is one package plus one registry line.

The toy dialect (tests/support/toy_dialect/, Ollama-like: POST /api/generate answered with
newline-delimited JSON) is defined outside spectop; registered with one line, it goes through
detection, polls, `spectop probe`, a sweep point, the capture proxy, the plain arm's command and
the setting lines, against a fake that answers by time and state (tests/support/toy_server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json

import pytest

from collectors.http import make_client
from collectors.launch.specflags import derive_plain_argv, is_void_draft
from collectors.requests.client import RequestSpec, stream_request
from collectors.requests.proxy_record import Capture, recorded_route
from collectors.servers import default_route, detect, open_collector, registry
from collectors.sweep import measure
from collectors.sweep.codec import to_json
from collectors.sweep.settings import off_above, setting_lines
from tests.support.toy_dialect import ToyCollector
from tests.support.toy_server import toy_serving
from tui.commands import probe, snapshot

TOKENS = 12
STEP_S = 0.03  # long enough that a loaded client still reads each step on its own


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setattr(registry, "DIALECTS", [*registry.DIALECTS, ToyCollector])  # the one line


async def test_the_toy_is_detected_and_polled(toy_registered):
    with toy_serving(step_s=STEP_S) as (url, _):
        async with make_client(None) as client:
            assert await detect(url, client) == "toy" and default_route("toy") == "completion"
            collector = open_collector(url, "toy", client=client)
            first = await collector.poll()
            assert first.ok and first.backend == "toy" and first.build == "0.1.0" and first.slots_busy == 0
            spec = RequestSpec(max_tokens=TOKENS, route="completion", dialect="toy")
            request = asyncio.create_task(stream_request(client, url, spec))
            busy = 0
            while not busy and not request.done():  # the server counts it from its arrival on
                busy = await collector.busy_slots() or 0
                await asyncio.sleep(0.01)
            record = await request
            after = await collector.poll()
    assert busy == 1 and record.committed_tokens == TOKENS
    assert after.tokens_predicted_total == TOKENS and after.slots_busy == 0 and after.live_tok_s


def test_spectop_snapshot_shows_the_toy(toy_registered):
    with toy_serving(step_s=STEP_S) as (url, _):
        snap = asyncio.run(snapshot.take(url, None, 0.1))
    names, values = (column._cells for column in snapshot.render(snap).columns)
    rows = dict(zip(names, values, strict=True))
    assert snap.backend == "toy" and rows["build"] == "0.1.0"
    assert rows["/api/ps"] == "ok"  # the dialect's load endpoint, from the registry
    assert rows["drafting"] == "unknown (the server does not say)"


def test_probe_reads_the_ndjson_stream(toy_registered):
    with toy_serving(step_s=STEP_S) as (url, _):
        args = argparse.Namespace(server=url, api_key=None, tokens=TOKENS, prompt="hi", route=None)
        record, _ = asyncio.run(probe.send(args))
    assert record.route == "/api/generate" and record.error is None and record.finish_reason == "length"
    assert record.committed_tokens == TOKENS and record.prompt_tokens == 7 and record.tokens_per_event_exact
    profile = record.latency
    assert profile.events == TOKENS and profile.tokens == TOKENS
    assert profile.ttft_ms is not None and profile.ttft_ms >= 25  # the fake's 30 ms prefill
    assert profile.chunk_gaps.count == TOKENS - 1
    assert profile.chunk_gaps.p50_ms is not None and profile.chunk_gaps.p50_ms >= STEP_S * 1000 * 0.8
    assert record.draft_n is None and record.server_steps is None  # plain: the server said nothing
    assert probe.render(record).row_count > 5


async def test_a_sweep_point_on_the_toy_with_and_without_drafting(toy_registered):
    points = {}
    for arm, lookahead in (("plain", 0), ("draft-4", 4)):
        with toy_serving(lookahead=lookahead, step_s=STEP_S) as (url, _):
            async with make_client(None) as client:
                spec = RequestSpec(max_tokens=TOKENS, route=default_route("toy"), dialect="toy")
                collector = open_collector(url, "toy", client=client)
                window = await measure.measure(client, url, [spec] * 2, collector, lambda: False, tag=arm)
        points[arm] = to_json(measure.window_figures(window))
    plain, draft = points["plain"], points["draft-4"]
    assert plain["committed_tokens"] == draft["committed_tokens"] == 2 * TOKENS
    assert plain["server_tokens"] == draft["server_tokens"] == 2 * TOKENS
    assert plain["server_steps"] == 2 * (TOKENS - 1)  # every step after each request's first token
    # drafting: 11 tokens after the first in steps of two (the last of one): 6 steps a request,
    # 4 draft tokens a step, one accepted in each step of two; per request T − 1 − A = 6 as well
    assert draft["server_steps"] == 2 * 6
    assert [(r["draft_n"], r["draft_n_accepted"]) for r in draft["requests"]] == [(24, 5)] * 2
    assert plain["concurrency_max"] == 2


def test_the_capture_proxy_reads_the_toy_stream_by_its_route(toy_registered):
    assert recorded_route("POST", "/api/generate")
    capture = Capture("http://toy", "/api/generate", 0.0, b'{"model": "toy", "prompt": "hi"}')
    capture.start(200, "application/x-ndjson", "")
    lines = [{"model": "toy", "response": f"t{i} ", "done": False} for i in range(3)]
    lines.append({"model": "toy", "response": "", "done": True, "done_reason": "stop", "eval_count": 3})
    for i, line in enumerate(lines):
        capture.chunk(0.1 * (i + 1), json.dumps(line).encode() + b"\n")
    record = capture.record(0.5)
    assert record.error is None and record.committed_tokens == 3 and record.latency.events == 3
    assert record.latency.ttft_ms == pytest.approx(100)


def test_the_toy_owns_its_flags_and_setting_lines(toy_registered):
    assert setting_lines("draft-4", "toy", None, 2) == ["Toy at 2 concurrent requests: --lookahead 4"]
    assert setting_lines("plain", "toy", None, 1) == ["Toy at 1 concurrent request: run without --lookahead"]
    assert off_above("toy", 4) == "Toy: run without --lookahead above 4 concurrent requests"
    assert derive_plain_argv(["toyserve", "-m", "m.bin", "-la", "4"]) == (
        ["toyserve", "-m", "m.bin"],
        ["-la", "4"],
    )
    assert not is_void_draft(["toyserve", "-la", "4"], env={})


def test_without_its_registry_line_the_toy_is_unknown_everywhere():
    assert setting_lines("draft-4", "toy", None, 2) == [
        "at 2 concurrent requests: run the draft-4 arm as measured"
    ]
    assert derive_plain_argv(["toyserve", "-la", "4"]) == (["toyserve", "-la", "4"], [])
    assert registry.request_body(RequestSpec(route="chat", dialect="toy"))[0] == "/v1/chat/completions"
    assert not recorded_route("POST", "/api/generate")
