"""detect() names each server from its own endpoints; open_collector() gives the matching collector."""

from __future__ import annotations

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.servers import default_route, detect, dialect, open_collector
from collectors.servers.llamacpp.collector import LlamaCppCollector
from collectors.servers.sglang.collector import SglangCollector
from collectors.servers.vllm.collector import VllmCollector
from tests.support.captures import read_json
from tests.support.fake_servers import FakeVllm, VllmEngine, mock_client
from tests.support.fake_sglang import FakeSglang, SglangRank

URL = "http://127.0.0.1:8000"


def llama_routes(path: str, query: dict[str, str]) -> tuple[int, str, bytes]:
    if path == "/props":
        return 200, "application/json", httpx.Response(200, json=read_json("draft-simple.props.json")).content
    return 404, "text/plain", b"File Not Found"


@pytest.mark.parametrize(
    ("routes", "expected"),
    [
        (llama_routes, "llama.cpp"),
        (FakeVllm([VllmEngine(running=1, per_pos=(0, 0))]), "vllm"),
        (FakeVllm([VllmEngine()], stats_off=True), "vllm"),  # no vllm:* series: /v1/models tells
        (FakeSglang([SglangRank()]), "sglang"),
        (FakeSglang([SglangRank()], old=True), "sglang"),  # /get_server_info only
        (FakeSglang([SglangRank()], enable_metrics=False), "sglang"),
    ],
    ids=["llama", "vllm", "vllm-stats-off", "sglang", "sglang-old", "sglang-no-metrics"],
)
async def test_detect(routes, expected):
    async with mock_client(routes) as client:
        assert await detect(URL, client) == expected


async def test_detect_vllm_from_metrics_alone():
    fake = FakeVllm([VllmEngine()])

    def routes(path: str, query: dict[str, str]):
        return (404, "text/plain", b"") if path == "/v1/models" else fake(path, query)

    async with mock_client(routes) as client:
        assert await detect(URL, client) == "vllm"


async def test_detect_refuses_an_unknown_server():
    async with mock_client(lambda path, query: (200, "text/html", b"<html>hello</html>")) as client:
        with pytest.raises(SpectopError, match="not as llama-server, SGLang or vLLM"):
            await detect(URL, client)


@pytest.mark.parametrize(
    ("backend", "cls"),
    [("llama.cpp", LlamaCppCollector), ("vllm", VllmCollector), ("sglang", SglangCollector)],
)
async def test_open_collector(backend, cls):
    collector = open_collector(URL + "/", backend)
    assert isinstance(collector, cls) and collector.backend == backend and collector.url == URL
    await collector.aclose()


def test_open_collector_refuses_unknown_backends():
    with pytest.raises(SpectopError, match="no collector"):
        open_collector(URL, "tgi")


def test_each_dialect_names_its_route_and_capabilities():
    assert [default_route(b) for b in ("llama.cpp", "vllm", "sglang")] == ["completion", "chat", "completion"]
    assert default_route("unknown") == "chat"  # a failed detection still probes over OpenAI chat
    assert dialect("llama.cpp").load_endpoint == "/slots" and dialect("sglang").load_endpoint == "/v1/loads"
    assert dialect("vllm").load_endpoint is None  # running requests are a /metrics gauge
    assert all(dialect(b).has_window_counters for b in ("llama.cpp", "vllm", "sglang"))
    with pytest.raises(SpectopError, match="spectop reads llama-server, SGLang and vLLM"):
        dialect("tgi")


async def test_detect_asks_for_an_api_key_when_every_endpoint_refuses():
    async with mock_client(lambda path, query: (401, "application/json", b'{"error":"no key"}')) as client:
        with pytest.raises(SpectopError, match="needs an API key"):
            await detect(URL, client)


async def test_detect_fetches_each_endpoint_once():
    fake = FakeVllm([VllmEngine()])
    async with mock_client(fake) as client:
        assert await detect(URL, client) == "vllm"
    assert fake.hits and all(n == 1 for n in fake.hits.values())
