"""The simulated vLLM with `--data-parallel-size 2` (collectors/simulator/vllm_dp.py cites 0.33's
source): two engines labelled engine="0"/"1", two API servers, so a multiprocess page (no
`_created`, no `process_*`), and spectop's readers (collectors/servers/vllm/dp.py) get its slot
total and requests per engine step right, checked against the simulator's own counts.

By hand: 16 slots over 2 engines is max_num_seqs 8 per engine, 16 in all; four requests running
put each API server's requests on both engines, so each engine step is observed twice by
`vllm:iteration_tokens_total`, and requests per step is (request, step) pairs / engine steps, 2
(the reader's window is taken while all four run: a lone request's steps are seen by one API
server only, in vLLM as here, and a page cannot tell).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Iterator

import httpx
import pytest

from collectors.promtext import parse
from collectors.requests.client import RequestSpec, stream_request
from collectors.servers import detect, open_collector
from collectors.simulator import Simulator
from collectors.simulator.vllm_dp import VllmDpMetrics
from tests.support.cli_runs import spectop, spectop_popen
from tests.support.processes import reaped

REQUESTS = 4
TOKENS = 120
LONG_TOKENS = 1000


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(seed=5, speedup=2, backend="vllm", dp=2) as simulator:
        yield simulator


def _window(url: str) -> tuple[object, object, list]:
    async def run() -> tuple[object, object, list]:
        async with httpx.AsyncClient(timeout=30) as client:
            backend = await detect(url, client)
            assert backend == "vllm"
            collector = open_collector(url, backend, client=client)
            first = await collector.poll()
            spec = RequestSpec(max_tokens=TOKENS, route="chat", dialect=backend)
            records = await asyncio.gather(*(stream_request(client, url, spec) for _ in range(REQUESTS)))
            return first, await collector.poll(), records

    return asyncio.run(run())


def test_the_page_is_a_multiprocess_merge_over_two_engines(sim: Simulator) -> None:
    page = httpx.get(sim.draft_url + "/metrics", timeout=30).text
    samples = parse(page)
    assert not any(name.endswith("_created") or name.startswith("process_") for name in samples)
    engines = {s.labels["engine"] for s in samples["vllm:num_requests_running"]}
    assert engines == {"0", "1"} and not any("pid" in s.labels for rows in samples.values() for s in rows)
    awake = [s.value for s in samples["vllm:engine_sleep_state"] if s.labels["sleep_state"] == "awake"]
    assert awake == [1.0, 1.0]  # one per engine, never summed over the API servers


@pytest.mark.slow
def test_readers_get_slot_total_and_requests_per_step(sim: Simulator) -> None:
    stats = sim.dialect_stats("plain")
    assert isinstance(stats, VllmDpMetrics)
    url = sim.plain_url

    async def run() -> tuple[object, tuple[int, int], tuple[int, int]]:
        async with httpx.AsyncClient(timeout=60) as client:
            collector = open_collector(url, "vllm", client=client)
            spec = RequestSpec(max_tokens=LONG_TOKENS, route="chat", dialect="vllm")
            sent = [asyncio.create_task(stream_request(client, url, spec)) for _ in range(REQUESTS)]
            while sim.state().plain.busy_slots < REQUESTS:
                await asyncio.sleep(0.01)
            await collector.poll()
            before = (stats.engine_steps, stats.decode_request_steps)
            await asyncio.sleep(0.4)
            after = (stats.engine_steps, stats.decode_request_steps)
            snap = await collector.poll()
            assert sim.state().plain.busy_slots == REQUESTS  # the window saw all four running
            await asyncio.gather(*sent)
            return snap, before, after

    snap, before, after = asyncio.run(run())
    truth = (after[1] - before[1]) / (after[0] - before[0])
    assert truth == pytest.approx(REQUESTS / 2)  # two requests on each engine
    assert snap.slots_total == 16
    assert snap.busy_slots_per_decode == pytest.approx(truth, rel=0.05)


def test_drafting_counters_sum_over_engines(sim: Simulator) -> None:
    before = sim.state().draft
    _, snap, _ = _window(sim.draft_url)
    after = sim.state().draft
    assert snap.drafting is True and snap.slots_total == 16
    drafted = after.drafted_tokens - before.drafted_tokens
    assert (snap.window_drafted, snap.window_accepted) == (
        drafted,
        after.accepted_tokens - before.accepted_tokens,
    )
    assert snap.window_tokens == REQUESTS * TOKENS


@pytest.mark.slow
def test_demo_serves_a_dp2_vllm_that_snapshot_reads() -> None:
    argv = ("demo", "--serve-only", "--backend", "vllm", "--dp", "2", "--speedup", "20")
    with reaped(spectop_popen(*argv)) as proc:
        assert proc.stdout is not None
        urls = dict(proc.stdout.readline().split() for _ in range(3))
        done = spectop("snapshot", "--server", urls["draft"], "--json", timeout_s=60)
        page = parse(httpx.get(urls["draft"] + "/metrics", timeout=30).text)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    assert done.returncode == 0, done.stderr
    snap = json.loads(done.stdout)
    assert (snap["backend"], snap["slots_total"]) == ("vllm", 16)
    assert {s.labels["engine"] for s in page["vllm:num_requests_running"]} == {"0", "1"}


@pytest.mark.slow
def test_dp_on_another_backend_is_one_clear_line() -> None:
    done = spectop("demo", "--serve-only", "--backend", "sglang", "--dp", "2", timeout_s=60)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "--dp" in done.stderr
