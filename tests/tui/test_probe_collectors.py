"""`spectop probe` samples the server's busy count through that server's own collector."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from tests.collectors.fake_servers import FakeVllm, VllmEngine
from tests.collectors.fake_sglang import FakeSglang, SglangRank
from tests.tui.test_snapshot_cli import serving
from tui.commands import probe


@pytest.mark.parametrize(
    ("fake", "dialect", "busy"),
    [
        (FakeVllm([VllmEngine(running=3), VllmEngine(running=4)]), "vllm", 7),
        (FakeSglang([SglangRank(running=5), SglangRank(running=1)]), "sglang", 6),
    ],
    ids=["vllm", "sglang"],
)
def test_probe_busy_count_per_dialect(fake, dialect, busy, monkeypatch):
    seen: dict[str, object] = {}

    async def fake_stream(client, url, spec, busy_probe=None, tag=None):
        seen.update(dialect=spec.dialect, route=spec.route, busy=await busy_probe())
        return "record"

    monkeypatch.setattr(probe, "stream_request", fake_stream)
    with serving(fake) as url:
        args = argparse.Namespace(server=url, api_key=None, tokens=8, prompt="hi", route=None)
        assert asyncio.run(probe.send(args)) == "record"
    assert seen == {"dialect": dialect, "route": "chat", "busy": busy}
