"""The dialects' shared contract: window deltas, answers read as unknown, one-line problems, re-reading."""

from __future__ import annotations

import httpx

from collectors.servers.answers import model_owner
from collectors.servers.base import ServerCollector, WindowCounters, WindowDelta, window_delta
from collectors.servers.snapshot import ServerSnapshot


def test_a_missing_read_or_counter_gives_no_delta():
    after = WindowCounters(tokens=120.0, drafted=40.0, accepted=30.0)
    assert window_delta(None, after) == WindowDelta()
    assert window_delta(after, None) == WindowDelta()
    delta = window_delta(WindowCounters(tokens=100.0, drafted=None, accepted=20.0), after)
    assert (delta.tokens, delta.drafted, delta.accepted) == (20, None, 10)


def test_one_decode_step_is_a_window_with_requests_per_decode():
    before = WindowCounters(request_steps=200.0, decode_steps=100.0)
    assert (
        window_delta(before, WindowCounters(request_steps=203.0, decode_steps=101.0)).busy_per_decode == 3.0
    )
    assert window_delta(before, before).busy_per_decode is None  # no step decoded: no figure


def answer(body) -> httpx.Response:
    return httpx.Response(200, json=body)


def test_model_owner_reads_odd_answers_as_unknown():
    assert model_owner(answer({"data": [{"owned_by": "vllm"}]})) == "vllm"
    assert model_owner(answer({"data": {"owned_by": "vllm"}})) is None  # not a list
    assert model_owner(answer({"data": [{"owned_by": 5}]})) is None


class Counted(ServerCollector):
    """A dialect whose identity is read once per server start; each answer is scripted."""

    backend = "counted"
    display_name = "Counted"

    def __init__(self, url: str, statuses: list[tuple[str, bool]], **kw) -> None:
        super().__init__(url, **kw)
        self.statuses = iter(statuses)
        self.identity_reads = 0

    async def fetch(self):
        status, restarted = next(self.statuses)
        if status == "ok" and self._identity is None:
            self.identity_reads += 1
            self._identity = {"model": "m"}
        return ServerSnapshot(self.url, self.backend, 0.0, status, restarted=restarted)

    def derive(self, prev, raw):
        return raw


async def test_identity_is_read_again_after_a_failure_or_a_restart():
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    collector = Counted(
        "http://s/", [("ok", False), ("ok", False), ("unreachable", False), ("ok", False)], client=client
    )
    assert collector.url == "http://s"
    for _ in range(4):
        await collector.poll()
    assert collector.identity_reads == 2
    collector = Counted("http://s", [("ok", False), ("ok", True), ("ok", False)], client=client)
    for _ in range(3):
        await collector.poll()
    assert collector.identity_reads == 2


async def test_problems_name_the_status_the_exception_and_the_fix():
    collector = Counted("http://s", [], client=httpx.AsyncClient())
    assert Counted.http_problem(httpx.Response(500), "/metrics") == "HTTP 500"
    refused = httpx.ConnectError("refused", request=httpx.Request("GET", "http://s/metrics"))
    assert collector.failed(refused) == {
        "status": "unreachable",
        "error": "cannot reach http://s (ConnectError)",
        "fix": "start the server there, or pass --server URL",
    }
    timeout = httpx.ReadTimeout("slow", request=httpx.Request("GET", "http://s/metrics"))
    assert collector.failed(timeout)["status"] == "error"  # it connected: not "unreachable"


async def test_a_metrics_page_that_is_not_200_is_no_page():
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda r: httpx.Response(404, text="x_total 1\n"))
    )
    assert await Counted("http://s", [], client=client).scrape() is None


async def test_the_api_key_reaches_the_servers_client():
    collector = Counted("http://s", [], api_key="k-123")
    assert collector._client.headers["Authorization"] == "Bearer k-123"
    await collector.aclose()
