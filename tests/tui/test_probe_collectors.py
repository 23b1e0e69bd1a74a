"""`spectop probe` samples the server's busy count through that server's own collector, and sends
its request on that dialect's default route."""

from __future__ import annotations

import argparse
import asyncio

import httpx
import pytest

from tests.support.captures import read_json
from tests.support.fake_servers import Answer, FakeVllm, VllmEngine
from tests.support.fake_sglang import FakeSglang, SglangRank
from tests.support.loopback import serving
from tui.commands import probe


def fake_llama(path: str, query: dict[str, str]) -> Answer:
    if path in ("/props", "/slots"):
        name = "draft-simple.props.json" if path == "/props" else "draft-simple.slots.busy.json"
        return 200, "application/json", httpx.Response(200, json=read_json(name)).content
    return 404, "text/plain", b"File Not Found"


@pytest.mark.parametrize(
    ("fake", "dialect", "route", "busy"),
    [
        (fake_llama, "llama.cpp", "completion", 2),
        (FakeVllm([VllmEngine(running=3), VllmEngine(running=4)]), "vllm", "chat", 7),
        (FakeSglang([SglangRank(running=5), SglangRank(running=1)]), "sglang", "completion", 6),
    ],
    ids=["llama", "vllm", "sglang"],
)
def test_probe_busy_count_per_dialect(fake, dialect, route, busy, monkeypatch):
    seen: dict[str, object] = {}

    async def fake_stream(client, url, spec, busy_probe=None, tag=None, mark=None):
        seen.update(dialect=spec.dialect, route=spec.route, busy=await busy_probe())
        return "record"

    monkeypatch.setattr(probe, "stream_request", fake_stream)
    with serving(fake) as url:
        args = argparse.Namespace(server=url, api_key=None, tokens=8, prompt="hi", route=None)
        record, polls = asyncio.run(probe.send(args))
    assert record == "record"
    assert seen == {"dialect": dialect, "route": route, "busy": busy}
    assert len(polls) >= 2  # before it was sent and after it ended: the windows its energy split reads
