"""`spectop probe` says where a request's steps came from: the server's counts, or stream bursts."""

from __future__ import annotations

import io

from rich.console import Console

from collectors.requests.client import RequestSpec, stream_request
from tests.support.fake_servers import chat_stream
from tests.support.streaming import capture, serving
from tui.commands import probe

URL = "http://127.0.0.1:8000"


def text(record) -> str:
    out = io.StringIO()
    Console(file=out, width=200).print(probe.render(record))
    return out.getvalue()


def rows(record) -> dict[str, str]:
    return {line.split("  ")[0].strip(): line for line in text(record).splitlines() if line.strip()}


async def test_steps_from_the_servers_counts_are_shown_plainly():
    async with serving(capture("draft-simple.chat.sse.jsonl")) as client:
        record = await stream_request(client, URL, RequestSpec(max_tokens=48, route="chat"))
    shown = rows(record)
    assert "17 / 17" in shown["drafted / accepted"] and "1.57" in shown["G (tokens per step)"]
    assert "30" in shown["verify steps"] and "bursts" not in text(record)


async def test_steps_from_bursts_are_marked_and_drafting_is_unknown_not_nothing():
    spec = RequestSpec(max_tokens=16, route="chat", dialect="vllm")
    async with serving(chat_stream(16, burst=3)) as client:
        record = await stream_request(client, URL, spec)
    shown = rows(record)
    assert "unknown" in shown["drafted / accepted"]
    assert "3.00 (from stream bursts)" in shown["G (tokens per step)"]
    assert "—" in shown["verified width"] and "--per-request-spec-decode-metrics" in text(record)
