"""vLLM's `--per-request-spec-decode-metrics` on the simulated vLLM (collectors/simulator/
vllm_request_spec.py cites 0.33's source): the last usage chunk's `metrics.speculative_decoding`
gives each request's drafted and accepted tokens, which the client (collectors/requests/streams.py) turns
into exact steps for probe, sweep and the Requests tab; checked against the simulator's counts.

By hand: a request of T tokens that accepted A drafts took T − 1 − A decode steps; its
histogram counts the steps that drafted, Σ j × histogram[j] = A.
"""

from __future__ import annotations

import asyncio
import json

import httpx

from collectors.requests.client import RequestSpec, stream_request
from collectors.servers import default_route
from collectors.simulator import Simulator

TOKENS = 96


def _records(url: str, n: int) -> list:
    spec = RequestSpec(max_tokens=TOKENS, route=default_route("vllm"), dialect="vllm")

    async def run() -> list:
        async with httpx.AsyncClient(timeout=30) as client:
            return await asyncio.gather(*(stream_request(client, url, spec) for _ in range(n)))

    return asyncio.run(run())


def test_records_take_each_requests_drafts_from_the_response() -> None:
    with Simulator(seed=6, speedup=20, backend="vllm", per_request_spec="summary") as sim:
        before = sim.state().draft
        records = _records(sim.draft_url, 3)
        after = sim.state().draft
        (plain,) = _records(sim.plain_url, 1)
    assert sum(r.draft_n for r in records) == after.drafted_tokens - before.drafted_tokens
    assert sum(r.draft_n_accepted for r in records) == after.accepted_tokens - before.accepted_tokens
    for r in records:
        assert r.committed_tokens == TOKENS and r.steps_exact
        assert r.server_steps == TOKENS - 1 - r.draft_n_accepted
    assert plain.draft_n is None  # a plain server sends no figures


def test_detailed_figures_add_up_and_ride_on_the_usage_chunk() -> None:
    body = {
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with Simulator(seed=6, speedup=20, backend="vllm", per_request_spec="detailed") as sim:
        text = httpx.post(sim.draft_url + "/v1/chat/completions", json=body, timeout=30).text
        no_usage = httpx.post(
            sim.draft_url + "/v1/chat/completions", json={**body, "stream_options": {}}, timeout=30
        ).text
    chunks = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
    assert all("metrics" not in c for c in chunks[:-1]) and chunks[-1]["choices"] == []
    spec = chunks[-1]["metrics"]["speculative_decoding"]
    hist = spec["acceptance_histogram"]
    assert len(hist) == spec["num_spec_tokens"] + 1 and sum(hist) == spec["num_spec_steps"]
    assert (
        sum(j * n for j, n in enumerate(hist))
        == spec["num_accepted_draft_tokens"]
        == sum(spec["per_step_accepted"])
    )
    assert sum(spec["per_step_drafted"]) == spec["num_draft_tokens"]
    assert spec["mean_acceptance_length"] == 1 + spec["num_accepted_draft_tokens"] / spec["num_spec_steps"]
    assert '"metrics"' not in no_usage  # vLLM sends them only on the usage chunk
