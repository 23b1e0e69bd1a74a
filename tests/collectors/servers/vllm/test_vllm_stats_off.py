"""vLLM with --disable-log-stats and --tool-call-parser: `vllm:` series that are not engine stats.

vLLM 0.33 registers `vllm:tool_call_parser_invocations_total` at start whenever a tool parser is
configured (vllm/parser/metrics.py `init_parser_metrics`, every label set at 0) and the realtime
task its `vllm:websocket_connections_*` series (entrypoints/speech_to_text/realtime/metrics.py),
whatever --disable-log-stats says; the engine's own series (num_requests_running,
generation_tokens_total, spec_decode_*) are registered only with stats on (v1/metrics/loggers.py).
So a server configured with EAGLE-3 and stats off must not read as "drafts nothing".
"""

from __future__ import annotations

from collectors.checkup import run_doctor
from collectors.servers.vllm import collector as vllm
from tests.support.fake_servers import FakeVllm, VllmEngine, mock_client

URL = "http://127.0.0.1:8000"


async def poll(fake: FakeVllm):
    return await vllm.VllmCollector(URL, client=mock_client(fake)).poll()


async def test_a_tool_parser_series_is_not_engine_stats():
    snap = await poll(FakeVllm([VllmEngine()], stats_off=True, tool_parser=True))
    assert snap.drafting is None  # unknown, not "drafts nothing"
    assert snap.metrics_status == vllm.STATS_OFF and "drafting unknown" in snap.metrics_status
    assert snap.drafted_total is None and snap.accepted_total is None and snap.tokens_predicted_total is None


async def test_stats_off_with_the_config_in_dev_mode_still_says_it_drafts():
    fake = FakeVllm([VllmEngine()], stats_off=True, tool_parser=True, dev_mode=True)
    snap = await poll(fake)
    assert snap.drafting is True and snap.spec_types == "eagle3 k=3"
    assert snap.metrics_status == vllm.STATS_OFF


async def test_window_counters_are_none_with_stats_off():
    fake = FakeVllm([VllmEngine()], stats_off=True, tool_parser=True)
    assert await vllm.VllmCollector(URL, client=mock_client(fake)).window_counters() is None


async def test_stats_on_without_spec_series_drafts_nothing():
    snap = await poll(FakeVllm([VllmEngine(generated=10, running=1)], spec=False))
    assert snap.drafting is False and snap.metrics_status == "ok" and snap.tokens_predicted_total == 10


def test_doctor_says_engine_stats_are_off():
    fake = FakeVllm([VllmEngine()], stats_off=True, tool_parser=True)
    report = run_doctor("none", URL, client=mock_client(fake))
    metrics = next(r for r in report.rows if r.name.endswith("/metrics"))
    assert metrics.status == "skipped" and "engine stats off (--disable-log-stats)" in metrics.message
    assert report.ok  # the server is healthy; only its drafting is unknown
