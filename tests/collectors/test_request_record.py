"""A request's steps and G through the client: the server's own counts where it gives them,
stream bursts (flagged) where it does not, and never G 1.00 or width 1.00 from missing counts."""

from __future__ import annotations

import pytest

from collectors.export import json_forms
from collectors.requests.client import RequestSpec, stream_request
from tests.support.fake_servers import chat_stream
from tests.support.streaming import capture, serving

URL = "http://127.0.0.1:8000"


async def test_llama_server_chat_steps_are_exact_from_its_timings():
    # the chat capture: 48 tokens, 17 drafted, 17 accepted; its events carry no per-token counts,
    # and here they all arrive at once, so bursts could say nothing
    async with serving(capture("draft-simple.chat.sse.jsonl")) as client:
        record = await stream_request(client, URL, RequestSpec(max_tokens=48, route="chat"))
    assert record.steps_exact and record.steps == 48 - 1 - 17
    assert record.mean_advance == pytest.approx(1 + 17 / 30)
    assert record.verified_width == pytest.approx(1 + 17 / 30)
    body = json_forms.request_dict(record)
    assert body["steps_exact"] is True and body["steps"] == 30


async def test_a_plain_llama_server_request_commits_one_token_per_step():
    async with serving(capture("plain.chat.sse.jsonl")) as client:
        record = await stream_request(client, URL, RequestSpec(max_tokens=48, route="chat"))
    assert record.draft_n is None and record.steps_exact and record.steps == 47
    assert record.mean_advance == 1.0 and record.verified_width == 1.0 and record.acceptance is None


async def test_vllm_without_per_request_metrics_reads_g_from_bursts_and_says_so():
    # 16 tokens: the first alone, then 5 chunks of 3 (vLLM sends one chunk per engine step)
    spec = RequestSpec(max_tokens=16, route="chat", dialect="vllm")
    async with serving(chat_stream(16, burst=3)) as client:
        record = await stream_request(client, URL, spec)
    assert not record.steps_exact and record.steps == 5
    assert record.mean_advance == pytest.approx(15 / 5)
    assert record.draft_n is None and record.acceptance is None and record.verified_width is None
    body = json_forms.request_dict(record)
    assert body["steps_exact"] is False and body["verified_width"] is None
