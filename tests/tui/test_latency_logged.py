"""The latency tab pools the inter-chunk gaps of requests whose chunks spectop timed. A request read
from the server's log has its first token and its end, not its chunks (its row in the requests
table says "—" for the gap tails): pooled, its whole decode counted as one "gap" of seconds (the
demo's tab read p50 3132 ms beside rows of 40 tok/s)."""

from __future__ import annotations

from pathlib import Path

from collectors.servers.server_log import LogReader, to_record
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of
from tests.support.manual_clock import ManualClock
from tui.app import SpectopApp
from tui.config import Settings

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "llama-server-logs"


def logged_records() -> list:
    lines = (LOGS / "draft.log").read_text(encoding="utf-8").splitlines()
    return [to_record(t, synthetic.URL) for t in LogReader(ManualClock(1000.0)).feed(lines)]


async def test_logged_requests_stay_out_of_the_gap_tails_and_the_probed_ones_are_pooled():
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    logged = logged_records()
    assert logged and all(r.latency.chunk_gaps.count == 0 for r in logged)
    async with app.run_test(size=(160, 45)) as pilot:
        app.add_records(logged)
        app.main.select_tab("latency")
        await pilot.pause()
        shown = " ".join(text_of(app.query_one("#latency-panel")).split())
        assert "no streamed requests yet" in shown and "gaps of the last" not in shown
        probed = synthetic.record("draft-simple", "p1", 2000.0)
        app.add_records([probed])
        await pilot.pause()
        shown = " ".join(text_of(app.query_one("#latency-panel")).split())
        tail = probed.latency.chunk_gaps
        assert "inter-chunk gaps of the last 1 streamed requests" in shown
        assert f"max {tail.max_ms:.1f} ms" in shown  # the probe's own largest gap, not a log's decode
