"""The simulated SGLang's native /generate (collectors/simulator/sglang_generate.py cites 0.5.23's
source): the probe and sweep route to SGLang, whose last meta_info gives each request's verify
passes and drafts exactly, checked against the simulator's own engine counts.

By hand: a request of T tokens whose draft steps accepted A drafts took T − 1 − A verify passes
(the first token is prefill's), each proposing num_draft_tokens − 1 = n_max drafts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from collectors.requests.client import RequestSpec, stream_request
from collectors.servers import default_route
from collectors.simulator import Simulator

TOKENS = 96


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(seed=4, speedup=20, backend="sglang") as simulator:
        yield simulator


def _records(url: str, n: int) -> list:
    spec = RequestSpec(max_tokens=TOKENS, route=default_route("sglang"), dialect="sglang")

    async def run() -> list:
        async with httpx.AsyncClient(timeout=30) as client:
            return await asyncio.gather(*(stream_request(client, url, spec) for _ in range(n)))

    return asyncio.run(run())


def test_a_drafting_request_gets_its_exact_verify_passes(sim: Simulator) -> None:
    before = sim.state().draft
    records = _records(sim.draft_url, 3)
    after = sim.state().draft
    n_max = sim.profile.draft.n_max
    assert all(r.route == "/generate" and r.ok for r in records)
    accepted = sum(r.draft_n_accepted for r in records)
    assert accepted == after.accepted_tokens - before.accepted_tokens
    for r in records:
        assert r.committed_tokens == TOKENS and r.steps_exact
        assert r.server_steps == TOKENS - 1 - r.draft_n_accepted
        assert r.draft_n == r.server_steps * n_max  # SGLang's proposed: verify × (D − 1)
    assert 0.6 < accepted / sum(r.draft_n for r in records) < 0.8  # note 25's 0.705


def test_the_plain_arm_sends_no_spec_counts(sim: Simulator) -> None:
    (record,) = _records(sim.plain_url, 1)
    assert record.committed_tokens == TOKENS and record.draft_n is None and not record.drafted


def test_events_are_steps_with_the_text_so_far_and_a_finish_dict(sim: Simulator) -> None:
    body = {"text": "hello", "sampling_params": {"max_new_tokens": 40, "temperature": 0}, "stream": True}
    with httpx.Client(timeout=30) as client:
        text = client.post(sim.draft_url + "/generate", json=body).text
        whole = client.post(sim.draft_url + "/generate", json={**body, "stream": False}).json()
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    outs = [json.loads(e) for e in events[:-1]]
    counts = [o["meta_info"]["completion_tokens"] for o in outs]
    assert counts[0] == 1 and counts[-1] == 40 and max(b - a for a, b in zip(counts, counts[1:])) > 1
    assert all(len(o["output_ids"]) == o["meta_info"]["completion_tokens"] for o in outs)
    assert outs[-2]["text"] == outs[-1]["text"][: len(outs[-2]["text"])]  # cumulative text
    assert [o["meta_info"]["finish_reason"] for o in outs[:-1]] == [None] * (len(outs) - 1)
    last = outs[-1]["meta_info"]
    assert last["finish_reason"] == {"type": "length", "length": 40}
    assert last["spec_accept_length"] == pytest.approx(40 / last["spec_verify_ct"])
    assert whole["meta_info"]["completion_tokens"] == 40 and whole["text"] == outs[-1]["text"]
