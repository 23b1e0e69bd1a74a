"""llama-server's window G on a real server drafting under --spec-draft-p-min: every step of the
finished requests (T − R − A, R from /slots) equals the steps the requests' own timings give."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from collectors.client import RequestSpec, stream_request
from collectors.servers.llamacpp import LlamaCppCollector

pytestmark = pytest.mark.llama


def test_window_g_counts_the_steps_that_drafted_nothing(llama_server, draft_args):
    server = llama_server(*draft_args, "--spec-draft-p-min", "0.5")

    async def scenario():
        async with httpx.AsyncClient(timeout=60) as client:
            collector = LlamaCppCollector(server.url, client=client)
            await collector.poll()
            specs = [RequestSpec(prompt=f"the meter of rack {i} reads", max_tokens=120) for i in range(3)]
            busy: list[int] = []

            async def watch() -> None:
                while True:
                    busy.append(await collector.busy_slots() or 0)
                    await asyncio.sleep(0.005)

            watcher = asyncio.create_task(watch())
            records = await asyncio.gather(*(stream_request(client, server.url, s) for s in specs))
            watcher.cancel()
            for _ in range(200):  # the slots are released just after the last event
                if not await collector.busy_slots():
                    break
                await asyncio.sleep(0.05)
            return await collector.poll(), records, max(busy, default=0)

    snap, records, most_busy = asyncio.run(scenario())
    if most_busy < 3:  # the premise, not spectop: unseen together, two may have shared a slot
        pytest.skip(f"at most {most_busy} of the 3 requests were seen running at once (a loaded machine)")
    assert all(r.ok and r.steps_exact for r in records)
    steps = sum(r.steps for r in records)
    accepted = sum(r.draft_n_accepted or 0 for r in records)
    assert snap.window_finished == 3  # three at once: each on its own slot, seen when idle again
    assert snap.window_steps == steps and snap.window_accepted == accepted
    assert snap.mean_advance == pytest.approx(1 + accepted / steps)
    assert snap.window_drafted_steps is not None and snap.window_drafted_steps <= steps
    assert 1 + sum(snap.survival) == pytest.approx(snap.mean_advance)
