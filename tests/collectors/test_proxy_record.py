"""What the capture proxy records of an answer passing through it, from real llama-server captures.

Expected counts are read off the captures by hand (tests/data/llama-server/): the streamed
draft-simple completion ends with predicted_n 48, draft_n 19, draft_n_accepted 15, its first event
at 7.656 ms; the chat stream ends with 48 / 17 / 17. A proxied request's figures must be those
spectop's own client gets from the same bytes.
"""

from __future__ import annotations

import hashlib
import json

from collectors.requests import client
from collectors.requests.proxy_record import Capture, recorded_route, with_busy
from tests.support.captures import read_text, sse_lines
from tests.support.streaming import capture as sse_body
from tests.support.streaming import serving

URL = "http://127.0.0.1:8080"


def chunked(name: str, pieces: int = 3) -> list[tuple[float, bytes]]:
    """The capture as chunks that end mid-line (and mid-character), each stamped with its line's time."""
    out = []
    for t_s, line in sse_lines(name):
        data = (line + "\n\n").encode()
        cuts = [len(data) * i // pieces for i in range(pieces + 1)]
        out += [(t_s, data[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]
    return out


def proxied(name: str, path: str, t_send_s: float = 0.0):
    capture = Capture(URL, path, t_send_s, b'{"model": "asked-for", "stream": true}')
    capture.start(200, "text/event-stream; charset=utf-8", "")
    chunks = chunked(name)
    for t_s, data in chunks:
        capture.chunk(t_s, data)
    return capture.record(chunks[-1][0])


def test_a_streamed_completion_gives_the_servers_counts_and_the_chunks_timing() -> None:
    record = proxied("draft-simple.completion.sse.jsonl", "/completion")
    assert record.ok and record.tag == "proxy" and record.route == "/completion"
    assert (record.committed_tokens, record.draft_n, record.draft_n_accepted) == (48, 19, 15)
    assert record.steps == 48 - 1 - 15 and record.steps_exact
    assert record.latency.ttft_ms is not None and abs(record.latency.ttft_ms - 7.656) < 1e-6
    assert record.latency.chunk_gaps.p99_ms is not None and record.latency.chunk_gaps.max_ms > 0


def test_a_streamed_chat_gives_the_final_usage_and_timings() -> None:
    record = proxied("draft-simple.chat.sse.jsonl", "/v1/chat/completions")
    assert record.ok and (record.committed_tokens, record.draft_n, record.draft_n_accepted) == (48, 17, 17)
    assert record.model == "tiny-target.gguf"  # the answer's model, over the one asked for


async def test_the_same_figures_as_spectops_own_client_from_the_same_bytes() -> None:
    name = "draft-simple.completion.sse.jsonl"
    async with serving(sse_body(name)) as http:
        own = await client.stream_request(http, URL, client.RequestSpec(max_tokens=48))
    record = proxied(name, "/completion")
    for field in ("committed_tokens", "draft_n", "draft_n_accepted", "server_steps", "text_sha256"):
        assert getattr(record, field) == getattr(own, field), field
    assert record.mean_advance == own.mean_advance and record.verified_width == own.verified_width


def test_text_split_inside_a_character_is_read_whole() -> None:
    text = "été → ✓"
    event = (
        "data: " + json.dumps({"content": text, "tokens_predicted": 3}, ensure_ascii=False) + "\n\n"
    ).encode()
    final = b'data: {"content": "", "stop": true, "tokens_predicted": 3, "timings": {"predicted_n": 3}}\n\n'
    capture = Capture(URL, "/completion", 0.0, b"{}")
    capture.start(200, "text/event-stream", "")
    body = event + final
    for i in range(len(body)):  # one byte at a time: every character split
        capture.chunk(0.001 * i, body[i : i + 1])
    record = capture.record(1.0)
    assert record.ok and record.text_sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_a_non_streamed_answer_is_read_whole() -> None:
    capture = Capture(URL, "/completion", 0.0, b"{}")
    capture.start(200, "application/json; charset=utf-8", "")
    body = read_text("draft-simple.completion.json").encode()
    for i in range(0, len(body), 100):
        capture.chunk(0.5, body[i : i + 100])
    record = capture.record(0.5)
    assert record.ok and (record.committed_tokens, record.draft_n, record.draft_n_accepted) == (48, 19, 15)


def test_a_refused_or_broken_answer_is_an_error_on_the_record_never_an_exception() -> None:
    refused = Capture(URL, "/completion", 0.0, b"not json")
    refused.start(503, "application/json", "")
    refused.chunk(0.1, b'{"error": {"code": 503, "message": "Loading model"}}')
    assert refused.record(0.1).error == "answered HTTP 503"

    odd = Capture(URL, "/completion", 0.0, b"{}")
    odd.start(200, "text/event-stream", "")
    odd.chunk(0.1, b'data: {"content": "a", "tokens_predicted": 1}\n\ndata: [1, 2]\n\n')
    odd.chunk(0.2, b'data: {"content": "b", "tokens_predicted": 2}\n\n')  # ignored: recording stopped
    record = odd.record(0.2)
    assert "not a JSON object" in (record.error or "") and record.latency.tokens == 1

    gone = Capture(URL, "/completion", 0.0, b"{}")
    gone.start(200, "text/event-stream", "")
    gone.chunk(0.1, b'data: {"content": "a", "tokens_predicted": 1}\n\n')
    assert gone.record(0.1, "client disconnected").error == "client disconnected"

    zipped = Capture(URL, "/completion", 0.0, b"{}")
    zipped.start(200, "text/event-stream", "gzip")
    zipped.chunk(0.1, b"\x1f\x8b\x08\x00")
    assert "compressed" in (zipped.record(0.1).error or "")


def test_only_generation_routes_are_recorded() -> None:
    assert recorded_route("POST", "/completion") and recorded_route("POST", "/v1/chat/completions")
    assert recorded_route("POST", "/generate") and recorded_route("POST", "/v1/completions")
    assert not recorded_route("GET", "/metrics") and not recorded_route("POST", "/tokenize")
    assert not recorded_route("GET", "/completion")


def test_busy_slots_polled_during_the_request_are_its_batch() -> None:
    record = proxied("draft-simple.completion.sse.jsonl", "/completion")
    busy = with_busy(record, [1, 3, 2])
    assert (busy.concurrency_mean, busy.concurrency_max) == (2.0, 3)
    assert with_busy(record, []) is record
