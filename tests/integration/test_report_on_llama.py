"""`spectop report FILE` on a session recorded against a real drafting llama-server: its
per-request joules, tokens per joule and EDP, and its verify steps by tokens accepted, read from
the server's own per-position counters."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from collectors import promtext
from collectors.meters import MeterReading
from collectors.recording.writer import Recorder
from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.llamacpp.collector import LlamaCppCollector
from tests.support import synthetic
from tui.cli import main

pytestmark = pytest.mark.llama

POWER_W = 50.0


def accepted_total(url: str) -> float:
    samples = promtext.parse(httpx.get(url + "/metrics").text)
    return samples["llamacpp:spec_decode_num_accepted_tokens_total"][0].value


async def session(url: str):
    """A poll, three 48-token requests at once, a poll: the second's window holds all three."""
    async with httpx.AsyncClient(timeout=60) as client:
        collector = LlamaCppCollector(url, client=client)
        before = await collector.poll()
        specs = [
            RequestSpec(prompt=f"the power supply of request {i} draws", max_tokens=48) for i in range(3)
        ]
        records = await asyncio.gather(
            *(stream_request(client, url, s, busy_probe=collector.busy_slots) for s in specs)
        )
        after = await collector.poll()  # llama-server counts a request when it ends: all three are in
    return before, records, after


def test_report_on_a_recorded_real_drafting_session(llama_server, draft_args, tmp_path, capsys):
    server = llama_server(*draft_args)
    accepted_before = accepted_total(server.url)
    before, records, after = asyncio.run(session(server.url))
    accepted = accepted_total(server.url) - accepted_before
    assert accepted > 0  # the tiny draft is accepted now and then: the steps' shares say something
    path = tmp_path / "session.jsonl"
    rec = Recorder(path, server_url=server.url, meter=synthetic.METER)
    # a steady 50 W meter read every 0.1 s from a second before the first poll to a second after the last
    t0_s, steps = before.taken_at_s - 1.0, round((after.taken_at_s - before.taken_at_s + 2.0) * 10)
    rec.meter([MeterReading(t0_s + k / 10, POWER_W * k / 10, POWER_W) for k in range(steps + 1)])
    rec.poll(before)
    rec.poll(after)
    rec.requests(records)
    rec.close()

    assert main(["report", str(path), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = summary["requests"]
    assert len(rows) == 3 and all(r["tokens"] == 48 for r in rows)
    # the three ran at once and nothing else did: their joules are the meter's over their joint span
    span_s = max(r.t_done_s for r in records) - min(r.t_send_s for r in records)
    assert sum(r["energy_j"] for r in rows) == pytest.approx(POWER_W * span_s, rel=0.01)
    for r in rows:
        assert r["tokens_per_j"] == pytest.approx(48 / r["energy_j"])
        assert r["edp_js"] == pytest.approx(r["energy_j"] * r["e2e_s"])
    # every request drafted: each is in one acceptance bin
    assert sum(summary["acceptance_histogram"]["requests"]) == 3
    # the steps' accepted tokens, Σ j · share_j · steps (= Σ S_j · steps), are the server's accepted count
    per_step = summary["accepted_per_step"]
    assert per_step is not None and sum(per_step["share"]) == pytest.approx(1.0)
    shares = per_step["share"]
    assert sum(j * s for j, s in enumerate(shares)) * per_step["steps"] == pytest.approx(accepted)

    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "acceptance over requests" in out and "verify steps by tokens accepted" in out
