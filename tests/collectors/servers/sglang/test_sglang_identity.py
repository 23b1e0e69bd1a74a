"""SGLang's context length, restarts told by /server_info's startup_time, and /health 503, as 0.5.23 serves them.

Sources (sglang 0.5.23 wheel): entrypoints/http_server.py `available_models` sets `max_model_len`
to model_config.context_len; observability/metrics_collector.py:1337 registers `sglang:context_len`
("Maximum context length."); server_args.py's `context_length` is the --context-length argument,
None by default, and /server_info echoes it; `server_info` adds `startup_time`; `health_generate`
answers 503 while starting, while shutting down (`gracefully_exit`) and when the health check fails.
"""

from __future__ import annotations

from collectors.servers import base
from collectors.servers.answers import parse_metrics
from collectors.servers.sglang import collector as sglang
from tests.support.fake_servers import mock_client
from tests.support.fake_sglang import FakeSglang, server_info
from tests.support.polls import R0, TOK

URL = "http://127.0.0.1:30000"


def test_context_length_from_v1_models_then_the_gauge_never_the_argument():
    info = server_info() | {"context_length": 2048}  # --context-length 2048 would also set the two below
    models = [{"id": "m", "max_model_len": 32768}]
    page = parse_metrics('sglang:context_len{tp_rank="0"} 16384.0\n')
    assert sglang.context_len(sglang.RawPoll(0.0, info=info, models=models, metrics=page)) == 32768
    assert sglang.context_len(sglang.RawPoll(0.0, info=info, metrics=page)) == 16384
    assert sglang.context_len(sglang.RawPoll(0.0, info=info)) is None
    lora = [{"id": "adapter", "max_model_len": None}]  # a LoRA card has none: the gauge still says
    assert sglang.context_len(sglang.RawPoll(0.0, models=lora, metrics=page)) == 16384


async def test_a_poll_reads_the_context_length_from_v1_models():
    fake = FakeSglang([R0], TOK, enable_metrics=False)  # no gauge: /v1/models alone
    snap = await sglang.SglangCollector(URL, client=mock_client(fake)).poll()
    assert snap.n_ctx_slot == 8192


async def test_a_restart_the_counters_cannot_see_is_told_by_startup_time():
    fake = FakeSglang([R0], TOK, enable_metrics=False)  # no counters to go backwards
    collector = sglang.SglangCollector(URL, client=mock_client(fake))
    assert not (await collector.poll()).restarted
    fake.startup_time += 60.0  # restarted between two polls, never seen loading
    seen = [(await collector.poll()).restarted for _ in range(base.IDENTITY_POLLS)]
    assert seen == [False] * (base.IDENTITY_POLLS - 1) + [True]  # told by the periodic re-read
    assert fake.hits["/server_info"] == 2


async def test_health_503_says_starting_or_shutting_down():
    def stopping(path: str, query: dict[str, str]):
        return (503, "text/plain", b"") if path == "/health" else FakeSglang([R0], TOK)(path, query)

    snap = await sglang.SglangCollector(URL, client=mock_client(stopping)).poll()
    assert snap.status == "loading" and "shutting down" in snap.error
