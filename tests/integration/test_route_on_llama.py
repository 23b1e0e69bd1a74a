"""Routing by batch on two real llama-servers (the wheel's, the tiny pair): a plain one and a drafting one.

With the crossover at batch 3, a request joining a batch of 1 or 2 goes to the drafting server and
one joining 3 or more to plain. Waves of 1 to 5 requests held in flight together are sent through
the proxy, each sent once the one before it streams; the truths are worked out from the waves
alone: in a wave of n, the k-th (k = 1..n) joins a batch of k, so a wave of 5 sends 2 to draft and 3 to plain. Each
server's own /metrics counts the requests it served, which must be the router's count for it; every
text is the target's own greedy text, as the plain server gives it directly.
"""

from __future__ import annotations

import json
import re
import threading
import time

import httpx
import psutil
import pytest

from collectors.launch.process import ServerProcess
from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.record import RequestRecord
from collectors.requests.router import RoutePlan, parse_tag

pytestmark = pytest.mark.llama
LOCAL = ListenAddress("127.0.0.1", 0)
PROMPTS = ["Write a short story about the sun.", "Explain speculative decoding.", "hello world the"]
LONG_TOKENS = 600  # about 5 s: a wave's first requests stay in flight while the later ones arrive
ARGS = ("--metrics", "-np", "4", "-c", "16384", "-t", "1")  # 4,096 tokens a slot


def requests_total(url: str) -> float:
    text = httpx.get(url + "/metrics", timeout=10, trust_env=False).text
    found = re.search(r"^llamacpp:tokens_predicted_total (\S+)$", text, re.M)
    assert found is not None
    return float(found[1])


def complete(url: str, prompt: str, n_predict: int, first: threading.Event | None = None) -> str:
    """The streamed text; `first` is set when its first token arrives (the request is in flight)."""
    body = {"prompt": prompt, "n_predict": n_predict, "temperature": 0, "ignore_eos": True, "stream": True}
    events = []
    with httpx.Client(timeout=120, trust_env=False) as client:
        with client.stream("POST", url + "/completion", json=body) as answer:
            answer.raise_for_status()
            for line in answer.iter_lines():
                if line.startswith("data: {"):
                    events.append(json.loads(line[6:]))
                    if first is not None:
                        first.set()
    return "".join(e.get("content", "") for e in events)


def wave(url: str, n: int) -> list[str]:
    """n requests, each sent once the one before has streamed its first token (it is in flight)."""
    texts: list[str] = [""] * n
    threads = []
    for k in range(n):
        tokens = LONG_TOKENS if k < n - 1 else 16
        first = threading.Event()
        thread = threading.Thread(
            target=lambda k=k, t=tokens, f=first: texts.__setitem__(k, complete(url, PROMPTS[k % 3], t, f))
        )
        thread.start()
        threads.append(thread)
        assert first.wait(60)
    for thread in threads:
        thread.join()
    return texts


def test_every_request_lands_on_the_server_its_batch_says_with_the_targets_own_text(
    llama_server, draft_args: list[str]
) -> None:
    plain: ServerProcess = llama_server(base=ARGS)
    draft: ServerProcess = llama_server(*draft_args, base=ARGS)
    own = {(p, n): complete(plain.url, p, n) for p in PROMPTS for n in (16, LONG_TOKENS)}
    records: list[RequestRecord] = []
    plan = RoutePlan(plain.url, draft.url, 3.0, "batch 3 given")
    before = {s.url: requests_total(s.url) for s in (plain, draft)}
    with ProxyServer(draft.url, LOCAL, records.append, route=plan) as proxy:
        texts = [wave(proxy.url, n) for n in (1, 2, 5)]
        for _ in range(100):
            if len(records) == 8:
                break
            time.sleep(0.05)
    # waves 1, 2, 5: batches joined 1 | 1 2 | 1 2 3 4 5 -> draft 5 requests, plain 3
    choices = sorted((parse_tag(r.tag) for r in records), key=lambda c: c.batch if c else 0)
    assert [(c.batch, c.name) for c in choices if c] == [
        (1, "draft"), (1, "draft"), (1, "draft"), (2, "draft"), (2, "draft"),
        (3, "plain"), (4, "plain"), (5, "plain"),
    ]  # fmt: skip
    assert all(
        r.server_url == (draft.url if parse_tag(r.tag).name == "draft" else plain.url) for r in records
    )  # type: ignore[union-attr]
    # each server generated exactly the tokens of the requests routed to it
    for server in (plain, draft):
        routed = sum(r.committed_tokens or 0 for r in records if r.server_url == server.url)
        assert requests_total(server.url) - before[server.url] == routed
    assert sum(bool(r.draft_n) for r in records if r.server_url == draft.url) == 5
    assert not any(r.draft_n for r in records if r.server_url == plain.url)
    # greedy: every text through the router is the target's own, whichever server gave it
    for n, got in zip((1, 2, 5), texts):
        want = [own[(PROMPTS[k % 3], LONG_TOKENS if k < n - 1 else 16)] for k in range(n)]
        assert got == want
    rss_mb = {
        name: psutil.Process(s.pid).memory_info().rss / 2**20
        for name, s in (("plain", plain), ("draft", draft))
    }
    print(f"RSS MB: {rss_mb}")


def test_a_server_that_is_down_sends_its_requests_to_the_other_and_says_so(
    llama_server, draft_args: list[str]
) -> None:
    plain: ServerProcess = llama_server()
    draft: ServerProcess = llama_server(*draft_args)
    draft.stop()
    records: list[RequestRecord] = []
    plan = RoutePlan(plain.url, draft.url, 3.0, "batch 3 given")
    with ProxyServer(draft.url, LOCAL, records.append, route=plan) as proxy:
        text = complete(proxy.url, PROMPTS[0], 16)
        plain.stop()
        answer = httpx.post(proxy.url + "/completion", json={"prompt": "x", "n_predict": 4}, trust_env=False)
        for _ in range(100):
            if len(records) == 2:
                break
            time.sleep(0.05)
    assert text and records[0].server_url == plain.url and records[0].tag == "proxy:plain:1:draft down"
    assert answer.status_code == 502
    message = answer.json()["error"]["message"]
    assert draft.url in message and plain.url in message
