"""A window's energy ends come from meter marks only when the marks are fresh."""

from __future__ import annotations

import time

import httpx

from collectors.client import RequestSpec
from collectors.meters.base import MeterReading
from collectors.sweep import measure
from tests.fixtures import sse_lines


def stream_server() -> httpx.AsyncClient:
    body = "".join(line + "\n\n" for _, line in sse_lines("draft-simple.completion.sse.jsonl"))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body, headers={"Content-Type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def run_with(mark) -> measure.Window:
    async with stream_server() as client:
        return await measure.measure(
            client, "http://sim", [RequestSpec(max_tokens=48)] * 2, None, lambda: False, tag="t", mark=mark
        )


async def test_fresh_marks_become_the_energy_window():
    window = await run_with(lambda: MeterReading(time.monotonic(), 1.0, 10.0))
    assert window.energy_t0_s is not None and window.energy_t0_s <= window.t0_s
    assert window.energy_t1_s is not None and window.energy_t1_s >= window.t1_s
    figures = measure.window_figures(window)
    assert figures["committed_tokens"] == 96 and figures["drafted"] == 38 and figures["accepted"] == 30


async def test_a_throttled_meter_answering_with_an_old_reading_is_ignored():
    stale = MeterReading(time.monotonic() - 5.0, 1.0, 10.0)
    window = await run_with(lambda: stale)
    assert window.energy_t0_s is None and window.energy_t1_s is None
    assert (await run_with(None)).energy_t0_s is None
