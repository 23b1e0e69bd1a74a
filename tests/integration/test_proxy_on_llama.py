"""The capture proxy in front of the wheel's real llama-server on the tiny draft pair.

Traffic from a plain httpx client, not spectop: every request through the proxy is recorded with
drafted/accepted summing to the server's /metrics deltas, and with gap tails; a client's answer is
the same through the proxy as without it; a client that hangs up frees its slot.
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from collectors.launch.process import ServerProcess
from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.record import RequestRecord

pytestmark = pytest.mark.llama
LOCAL = ListenAddress("127.0.0.1", 0)
PROMPTS = ["Write a short story about the sun.", "Explain speculative decoding.", "hello world the"]


def metrics(url: str) -> dict[str, float]:
    text = httpx.get(url + "/metrics", timeout=10, trust_env=False).text
    return {m[1]: float(m[2]) for m in re.finditer(r"^llamacpp:(\w+) (\S+)$", text, re.M)}


def completion(url: str, i: int, stream: bool = True) -> bytes:
    body = {
        "prompt": PROMPTS[i],
        "n_predict": 16 + 4 * i,
        "temperature": 0,
        "ignore_eos": True,
        "stream": stream,
    }
    answer = httpx.post(url + "/completion", json=body, timeout=60, trust_env=False)
    answer.raise_for_status()
    return answer.content


def text_of(sse: bytes) -> str:
    events = [json.loads(line[6:]) for line in sse.decode().splitlines() if line.startswith("data: {")]
    return "".join(e.get("content", "") for e in events)


def wait_for(records: list[RequestRecord], n: int) -> None:
    for _ in range(400):
        if len(records) >= n:
            return
        time.sleep(0.05)


def test_every_proxied_request_matches_the_metrics_deltas_with_gap_tails(
    llama_server, draft_args: list[str]
) -> None:
    server: ServerProcess = llama_server(*draft_args)
    records: list[RequestRecord] = []
    before = metrics(server.url)
    with ProxyServer(server.url, LOCAL, records.append) as proxy:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda i: completion(proxy.url, i), range(3)))
        wait_for(records, 3)
    after = metrics(server.url)
    drafted = after["spec_decode_num_draft_tokens_total"] - before["spec_decode_num_draft_tokens_total"]
    accepted = (
        after["spec_decode_num_accepted_tokens_total"] - before["spec_decode_num_accepted_tokens_total"]
    )
    assert len(records) == 3 and all(r.ok for r in records)
    assert sorted(r.committed_tokens for r in records) == [16, 20, 24]
    assert sum(r.draft_n or 0 for r in records) == drafted > 0
    assert sum(r.draft_n_accepted or 0 for r in records) == accepted
    assert all(r.latency.chunk_gaps.p99_ms is not None and r.latency.ttft_ms for r in records)


def test_a_clients_answer_is_the_same_through_the_proxy(llama_server, draft_args: list[str]) -> None:
    server: ServerProcess = llama_server(*draft_args)
    records: list[RequestRecord] = []
    direct = [completion(server.url, i) for i in range(2)]
    plain = json.loads(completion(server.url, 0, stream=False))
    with ProxyServer(server.url, LOCAL, records.append) as proxy:
        through = [completion(proxy.url, i) for i in range(2)]
        proxied_plain = json.loads(completion(proxy.url, 0, stream=False))
        wait_for(records, 3)
    # temperature 0: the same text, token for token; only timings differ between two runs
    assert [text_of(b) for b in through] == [text_of(b) for b in direct]
    assert proxied_plain["content"] == plain["content"] and proxied_plain["tokens"] == plain["tokens"]
    assert records[2].committed_tokens == 16 and records[2].draft_n == proxied_plain["timings"]["draft_n"]


def test_a_client_that_hangs_up_frees_its_slot(llama_server, draft_args: list[str]) -> None:
    """The slot frees long before the request's own end: a slot has 1,024 tokens of context
    (-c 4096 -np 4), which the request would fill had its generation not been cancelled."""
    server: ServerProcess = llama_server(*draft_args)
    records: list[RequestRecord] = []
    body = {"prompt": PROMPTS[0], "n_predict": 4000, "temperature": 0, "ignore_eos": True, "stream": True}
    before = metrics(server.url)["tokens_predicted_total"]
    with ProxyServer(server.url, LOCAL, records.append) as proxy:
        with httpx.Client(timeout=60, trust_env=False) as client:
            with client.stream("POST", proxy.url + "/completion", json=body) as response:
                lines = response.iter_lines()
                assert next(lines).startswith("data: ")
                assert metrics(server.url)["requests_processing"] == 1
        for _ in range(400):
            if metrics(server.url)["requests_processing"] == 0:
                break
            time.sleep(0.05)
        wait_for(records, 1)
    assert metrics(server.url)["requests_processing"] == 0
    assert metrics(server.url)["tokens_predicted_total"] - before < 500
    assert records[0].error == "client disconnected"
