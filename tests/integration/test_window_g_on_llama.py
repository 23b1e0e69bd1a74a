"""llama-server's window G on a real server drafting under --spec-draft-p-min: every step of the
finished requests (T − R − A, R from /slots) equals the steps the requests' own timings give."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.llamacpp.collector import LlamaCppCollector

pytestmark = pytest.mark.llama


def test_window_g_counts_the_steps_that_drafted_nothing(llama_server, draft_args):
    server = llama_server(*draft_args, "--spec-draft-p-min", "0.5")

    async def scenario():
        async with httpx.AsyncClient(timeout=60) as client:
            collector = LlamaCppCollector(server.url, client=client)
            await collector.poll()
            # a slot each: R counts finished tasks per slot between polls, and on a loaded machine the
            # three need not overlap (two after another on one slot would be one finished task)
            specs = [
                RequestSpec(prompt=f"the meter of rack {i} reads", max_tokens=120, id_slot=i)
                for i in range(3)
            ]
            records = await asyncio.gather(*(stream_request(client, server.url, s) for s in specs))
            for _ in range(200):  # the slots are released just after the last event
                if not await collector.busy_slots():
                    break
                await asyncio.sleep(0.05)
            return await collector.poll(), records

    snap, records = asyncio.run(scenario())
    assert all(r.ok and r.steps_exact for r in records)
    steps = sum(r.steps for r in records)
    accepted = sum(r.draft_n_accepted or 0 for r in records)
    assert snap.window_finished == 3  # each on its own slot, seen when idle again
    assert snap.window_steps == steps and snap.window_accepted == accepted
    assert snap.mean_advance == pytest.approx(1 + accepted / steps)
    assert snap.window_drafted_steps is not None and snap.window_drafted_steps <= steps
    assert 1 + sum(snap.survival) == pytest.approx(snap.mean_advance)
