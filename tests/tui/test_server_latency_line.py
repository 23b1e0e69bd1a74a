"""The latency tab's line of the server's own latency, on the rendered screen.

The server's figures are tests/support/server_latency.py's, worked by hand from two polls' buckets
(TTFT p50 116.7 ms, p95 191.7 ms; prefix cache 50 %; 4 requests stopped in the window). spectop's
own requests read TTFTs of 140, 150 and 400 ms: their median is 150 ms, so client − server TTFT
p50 = 150 − 116.7 = +33.3 ms.
"""

from __future__ import annotations

import dataclasses

from collectors.servers.snapshot import ServerSnapshot
from tests.support import server_latency, synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings


def quiet_app() -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


def poll(t_s: float, **extra) -> ServerSnapshot:
    return ServerSnapshot(
        url=synthetic.URL, backend="vllm", taken_at_s=t_s, status="ok", window_s=1.0, **extra
    )


def with_ttft(index: int, ttft_ms: float):
    record = synthetic.record("draft-simple", f"r{index}", 100.2 + index)
    return dataclasses.replace(record, latency=dataclasses.replace(record.latency, ttft_ms=ttft_ms))


async def test_the_servers_tails_cache_finish_reasons_and_the_client_difference_are_shown():
    app = quiet_app()
    async with app.run_test(size=(160, 42)) as pilot:
        app.add_records([with_ttft(i, ms) for i, ms in enumerate((140.0, 400.0, 150.0))])
        for t_s in range(1, 10):
            app.post_message(messages.ServerPolled(poll(float(t_s), latency_counters=server_latency.BEFORE)))
        app.post_message(messages.ServerPolled(poll(10.0, latency_counters=server_latency.AFTER)))
        app.main.select_tab("latency")
        await pilot.pause()
        shown = " ".join(text_of(app.query_one("#server-latency")).split())
        assert "server last 9 s TTFT p50/p95 116.7/191.7 ms" in shown
        assert "prefix cache 50 % finished stop 4" in shown
        assert "client − server TTFT p50 +33.3 ms (network and client queueing)" in shown


async def test_a_server_without_latency_histograms_says_so():
    app = quiet_app()
    async with app.run_test(size=(160, 42)) as pilot:
        app.post_message(messages.ServerPolled(dataclasses.replace(poll(1.0), backend="llama.cpp")))
        app.main.select_tab("latency")
        await pilot.pause()
        shown = " ".join(text_of(app.query_one("#server-latency")).split())
        assert "server latency its /metrics has no latency histograms" in shown
