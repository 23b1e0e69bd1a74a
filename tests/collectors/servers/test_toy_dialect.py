"""A new server dialect is one module (a ServerCollector subclass) plus one line in the registry.

`ToyCollector` below is that module; the tests register it with one line and use it only through
the registry and the common contract, the way the dashboard, probe and sweep do.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pytest

from collectors.errors import SpectopError
from collectors.requests.client import RequestSpec
from collectors.servers import ServerSnapshot, default_route, detect, open_collector, registry
from collectors.servers.answers import json_body
from collectors.servers.auto import AutoCollector
from collectors.servers.base import (
    Probe,
    RawPoll,
    ServerCollector,
    WindowCounters,
    poll_fields,
    window_delta,
)
from collectors.sweep import measure
from collectors.sweep.codec import to_json
from tests.support.fake_servers import Answer, json_answer, mock_client

URL = "http://127.0.0.1:7000"


@dataclass
class ToyPoll(RawPoll):
    running: int | None = None
    generated: int | None = None


class ToyCollector(ServerCollector):
    """A server that says who it is on /toy/info, its queue on /queue and its counters on /toy/counters."""

    backend = "toy"
    display_name = "Toy"
    default_route = "completion"
    load_endpoint = "/queue"
    has_window_counters = True

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        body = json_body(await probe.get("/toy/info"))
        return isinstance(body, dict) and body.get("server") == "toy"

    async def fetch(self) -> ToyPoll:
        queue = json_body(await self._client.get(self.url + "/queue")) or {}
        counters = json_body(await self._client.get(self.url + "/toy/counters")) or {}
        return ToyPoll(time.monotonic(), running=queue.get("running"), generated=counters.get("generated"))

    def derive(self, prev: ToyPoll | None, raw: ToyPoll) -> ServerSnapshot:
        return ServerSnapshot(
            **poll_fields(self.url, self.backend, raw),
            slots_busy=raw.running,
            tokens_predicted_total=raw.generated,
        )

    async def busy_slots(self) -> int | None:
        return (json_body(await self._client.get(self.url + "/queue")) or {}).get("running")

    async def window_counters(self) -> WindowCounters | None:
        body = json_body(await self._client.get(self.url + "/toy/counters"))
        return WindowCounters(tokens=body["generated"], steps=body["steps"]) if body else None


class ToyServer:
    """Counts the tokens it streams; 3 requests running whenever asked."""

    def __init__(self) -> None:
        self.generated = 1000
        self.steps = 400

    def __call__(self, path: str, query: dict[str, str]) -> Answer:
        if path == "/toy/info":
            return json_answer({"server": "toy"})
        if path == "/queue":
            return json_answer({"running": 3})
        if path == "/toy/counters":
            return json_answer({"generated": self.generated, "steps": self.steps})
        if path == "/completion":
            self.generated += 8
            self.steps += 8
            events = [{"content": "tok ", "tokens_predicted": i} for i in range(1, 8)]
            events.append({"content": "", "stop": True, "tokens_predicted": 8, "stop_type": "limit"})
            body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
            return 200, "text/event-stream", body.encode()
        return 404, "text/plain", b"not here"


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setattr(registry, "DIALECTS", [*registry.DIALECTS, ToyCollector])  # the one line


async def test_a_toy_dialect_works_through_the_registry(toy_registered):
    server = ToyServer()
    async with mock_client(server) as client:
        backend = await detect(URL, client)
        assert backend == "toy" and default_route(backend) == "completion"
        collector = open_collector(URL, backend, client=client)
        assert isinstance(collector, ToyCollector)
        snap = await collector.poll()
        assert snap.backend == "toy" and snap.slots_busy == 3 and snap.tokens_predicted_total == 1000
        assert await collector.busy_slots() == 3
        before = await collector.window_counters()
        server.generated += 50
        assert window_delta(before, await collector.window_counters()).tokens == 50


async def test_a_sweep_window_reads_the_toy_dialects_counters(toy_registered):
    server = ToyServer()
    async with mock_client(server) as client:
        backend = await detect(URL, client)
        spec = RequestSpec(max_tokens=8, route=default_route(backend), dialect=backend)
        collector = open_collector(URL, backend, client=client)
        window = await measure.measure(client, URL, [spec] * 2, collector, lambda: False, tag="t")
    figures = to_json(measure.window_figures(window))
    assert figures["committed_tokens"] == 16 and figures["server_tokens"] == 16
    assert figures["server_steps"] == 16


async def test_auto_collector_detects_the_toy_dialect(toy_registered):
    server = ToyServer()
    auto = AutoCollector(URL, client=mock_client(server))
    assert auto.backend == "unknown" and await auto.window_counters() is None
    snap = await auto.poll()
    assert auto.backend == "toy" and snap.backend == "toy" and await auto.busy_slots() == 3
    assert (await auto.window_counters()) == WindowCounters(tokens=1000, steps=400)
    await auto.aclose()


async def test_unknown_servers_are_told_which_dialects_were_tried(toy_registered):
    async with mock_client(lambda path, query: (404, "text/plain", b"")) as client:
        with pytest.raises(SpectopError, match="not as llama-server, SGLang, vLLM or Toy"):
            await detect(URL, client)


async def test_without_its_registry_line_the_toy_dialect_is_unknown():
    with pytest.raises(SpectopError, match="no collector for a 'toy' server"):
        open_collector(URL, "toy")
    async with mock_client(ToyServer()) as client:
        with pytest.raises(SpectopError, match="not as llama-server, SGLang or vLLM"):
            await detect(URL, client)
