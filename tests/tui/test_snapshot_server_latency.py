"""`spectop snapshot` shows the server's own latency over its window (two polls' histogram deltas),
on simulated vLLM and SGLang servers, against the simulator's log of what its engine did (held out:
`Simulator.request_logs`, raw times, never the page spectop parses).

The traffic runs between the snapshot's two polls (in place of its wait), after a warm-up before
the first, so the window holds exactly the six requests sent in it: its TTFT and e2e observations
number six, and their means (exact, from the histograms' _sum and _count deltas) equal the means of
the raw times the simulator logged for those six.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from collectors.requests.client import RequestSpec, stream_request
from collectors.simulator import Simulator
from tui.cli import main
from tui.commands import snapshot

pytestmark = pytest.mark.slow
PROMPTS = ("Write a haiku about GPUs.", "Explain speculative decoding in two lines.", "def add(a, b):")


async def _send(url: str, backend: str, tokens: int) -> None:
    async with httpx.AsyncClient(timeout=60) as client:
        specs = [RequestSpec(prompt=p, max_tokens=tokens + 5 * i, route="chat", dialect=backend)
                 for i, p in enumerate(PROMPTS * 2)]  # fmt: skip
        await asyncio.gather(*(stream_request(client, url, s) for s in specs))


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_snapshot_prints_the_servers_own_latency_over_its_window(backend, monkeypatch, capsys):
    with Simulator(seed=5, speedup=8, backend=backend) as sim:
        url = sim.draft_url
        asyncio.run(_send(url, backend, 20))  # before the window: stays in the lifetime buckets

        async def traffic_instead_of_waiting(_window_s: float) -> None:
            await _send(url, backend, 40)

        monkeypatch.setattr(snapshot, "between_polls", traffic_instead_of_waiting)
        assert main(["snapshot", "--server", url, "--window", "1", "--json"]) == 0
        body = json.loads(capsys.readouterr().out)
        assert main(["snapshot", "--server", url, "--window", "1"]) == 0
        table = capsys.readouterr().out
        logged = sim.request_logs["draft"].finished()
    window = logged[6:12]  # the first snapshot's six; the warm-up's six came before them
    latency = body["server_latency"]
    ttft = [(r.t_first or 0.0) - r.t_submit for r in window]
    e2e = [r.t_end - r.t_submit for r in window]
    assert latency["tails"]["ttft"]["observations"] == 6
    assert latency["tails"]["e2e"]["observations"] == 6
    assert latency["tails"]["ttft"]["mean_ms"] == pytest.approx(1000 * sum(ttft) / 6, rel=1e-3)
    assert latency["tails"]["e2e"]["mean_ms"] == pytest.approx(1000 * sum(e2e) / 6, rel=1e-3)
    assert sum(latency["finished"].values()) == 6  # every request in the window ended once
    # the table says the same, labelled; the second snapshot saw its own six requests
    rows = {line.split("  ")[0].strip(): line for line in table.splitlines() if line.strip()}
    assert "(6 observed)" in rows["server TTFT p50/p95/p99"]
    assert "ms" in rows["server end-to-end p50/p95/p99"]


def test_one_poll_has_no_window_and_no_server_latency(capsys):
    with Simulator(seed=5, speedup=8, backend="vllm") as sim:
        assert main(["snapshot", "--server", sim.draft_url, "--window", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["server_latency"] is None
