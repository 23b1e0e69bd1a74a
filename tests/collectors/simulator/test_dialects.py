"""The simulator speaking vLLM and SGLang, read by spectop's own collectors (collectors/servers).

The truths are the simulator's own counts of what its engine did (`Simulator.state()`), never
what spectop reads: acceptance, tokens and steps over a window of streamed requests, busy slots
while they run, and the identity each page gives (model, context, slots, drafting).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Iterator

import httpx
import pytest

from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.registry import detect, open_collector
from collectors.simulator import Simulator
from tests.support.cli_runs import spectop, spectop_popen
from tests.support.processes import reaped

REQUESTS = 4
TOKENS = 160


@pytest.fixture(scope="module", params=["vllm", "sglang"])
def sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    # speedup 4: a request lasts about a second, so a loaded machine still samples it running
    with Simulator(seed=2, speedup=4, backend=request.param) as simulator:
        yield simulator


async def _window(sim: Simulator, url: str) -> tuple[str, object, object, list[int], object]:
    """Detect, poll, run REQUESTS streamed chats while sampling busy slots, poll again."""
    async with httpx.AsyncClient(timeout=30) as client:
        backend = await detect(url, client)
        collector = open_collector(url, backend, client=client)
        first = await collector.poll()
        spec = RequestSpec(max_tokens=TOKENS, route="chat", dialect=backend)
        busy: list[int] = []

        async def watch() -> None:
            while True:
                value = await collector.busy_slots()
                if value is not None:
                    busy.append(value)
                await asyncio.sleep(0.02)

        watcher = asyncio.create_task(watch())
        records = await asyncio.gather(*(stream_request(client, url, spec) for _ in range(REQUESTS)))
        watcher.cancel()
        second = await collector.poll()
        return backend, first, second, busy, records


def test_collectors_read_the_draft_arm_as_the_simulator_counted_it(sim: Simulator) -> None:
    before = sim.state().draft
    backend, first, snap, busy, records = asyncio.run(_window(sim, sim.draft_url))
    after = sim.state().draft
    assert backend == sim.backend
    assert all(r.committed_tokens == TOKENS for r in records)
    drafted = after.drafted_tokens - before.drafted_tokens
    accepted = after.accepted_tokens - before.accepted_tokens
    # requests seen running, never more than were sent (a loaded machine may sample only a few times)
    assert 1 <= max(busy) <= REQUESTS
    assert snap.slots_total == 16 and snap.n_ctx_slot == 4096 and snap.drafting is True
    assert snap.model == sim.profile.model_alias
    if backend == "vllm":  # live counters: the window is exactly what the engine did
        assert snap.window_tokens == REQUESTS * TOKENS
        assert (snap.window_drafted, snap.window_accepted) == (drafted, accepted)
        # every step commits 1 + accepted tokens; the first token of each request is its prefill's
        assert snap.window_steps == REQUESTS * TOKENS - REQUESTS - accepted
    else:  # SGLang: finished requests' counters, and acceptance as the last 40 iterations' gauge
        assert snap.tokens_predicted_total - (first.tokens_predicted_total or 0) == REQUESTS * TOKENS
        assert snap.window_steps == REQUESTS * TOKENS - REQUESTS - accepted
        assert snap.accept_rate_gauge == pytest.approx(accepted / drafted, abs=0.08)
        assert snap.accept_length_gauge == pytest.approx(1 + accepted / snap.window_steps, abs=0.4)
    assert 0.6 < accepted / drafted < 0.8  # note 25's 0.705, over a short window


def test_the_plain_arm_drafts_nothing(sim: Simulator) -> None:
    backend, _, snap, _, records = asyncio.run(_window(sim, sim.plain_url))
    assert backend == sim.backend and snap.drafting is False
    assert all(r.committed_tokens == TOKENS for r in records)
    if backend == "vllm":
        assert snap.window_tokens == REQUESTS * TOKENS and snap.window_drafted == 0
        assert snap.window_steps == REQUESTS * (TOKENS - 1)


def test_a_streamed_chunk_is_one_engine_step(sim: Simulator) -> None:
    """vLLM and SGLang send a verify step's tokens as one chunk, with continuous usage."""
    body = {
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    with httpx.Client(timeout=30) as client:
        text = client.post(sim.draft_url + "/v1/chat/completions", json=body).text
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    counts = [c["usage"]["completion_tokens"] for c in chunks]
    assert counts[-1] == 64 and counts == sorted(counts)
    steps = [b - a for a, b in zip(counts, counts[1:]) if b > a]
    assert max(steps) > 1  # accepted drafts leave with their step's token
    assert chunks[-1]["choices"] == [] and chunks[-2]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_snapshot_command_on_the_serve_only_demo(backend: str) -> None:
    with reaped(spectop_popen("demo", "--serve-only", "--backend", backend, "--speedup", "20")) as proc:
        assert proc.stdout is not None
        urls = dict(proc.stdout.readline().split() for _ in range(3))
        done = spectop("snapshot", "--server", urls["draft"], "--json", timeout_s=60)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["backend"] == backend
