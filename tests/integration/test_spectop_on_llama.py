"""spectop's client, collector and CLI against a real llama-server (tiny generated models)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from collectors import promtext
from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.llamacpp.collector import LlamaCppCollector
from tui.cli import main

pytestmark = pytest.mark.llama


def metrics(url: str) -> dict[str, float]:
    samples = promtext.parse(httpx.get(url + "/metrics").text)
    return {name: rows[0].value for name, rows in samples.items() if rows and not rows[0].labels}


async def send_batch(url: str, n: int, tokens: int, route: str = "completion"):
    async with httpx.AsyncClient(timeout=60) as client:
        collector = LlamaCppCollector(url, client=client)
        specs = [
            RequestSpec(prompt=f"the power supply of request {i} draws", max_tokens=tokens, route=route)
            for i in range(n)
        ]
        return await asyncio.gather(
            *(stream_request(client, url, s, busy_probe=collector.busy_slots) for s in specs)
        )


@pytest.mark.parametrize("route", ["completion", "chat"])
def test_drafting_server_records_match_the_servers_counters(llama_server, draft_args, route):
    server = llama_server(*draft_args)
    before = metrics(server.url)
    records = asyncio.run(send_batch(server.url, 3, 48, route))
    after = metrics(server.url)
    drafted = sum(r.draft_n for r in records)
    accepted = sum(r.draft_n_accepted for r in records)
    assert (
        after["llamacpp:spec_decode_num_draft_tokens_total"]
        - before["llamacpp:spec_decode_num_draft_tokens_total"]
        == drafted
    )
    assert (
        after["llamacpp:spec_decode_num_accepted_tokens_total"]
        - before["llamacpp:spec_decode_num_accepted_tokens_total"]
        == accepted
    )
    assert after["llamacpp:tokens_predicted_total"] - before["llamacpp:tokens_predicted_total"] == 3 * 48
    assert 0 < accepted < drafted
    for r in records:
        assert r.ok and r.committed_tokens == 48
        # steps come from the server's counts: 1 prefill token + steps + accepted drafts; the step
        # keys' bursts agree unless a one-token step held back incomplete UTF-8 (no event of its own)
        assert sum(e.n_tokens for e in r.events) == 48
        assert r.steps_exact and 1 + r.steps + r.draft_n_accepted == 48
        assert len(r.latency.burst_sizes) - 1 <= r.steps
        # busy slots sampled while it ran are never more than the three sent (a sample can land
        # before the server admits a request, so 0 is possible). On a loaded machine a 48-token
        # answer can end before the first /slots read returns: no sample is its own, and spectop
        # shows the concurrency as unknown (the client tests hold sampling to exact counts)
        assert r.concurrency_max is None or 0 <= r.concurrency_max <= 3
    # the server counts verify steps only where a draft was made, spectop counts every decode step
    server_steps = (
        after["llamacpp:spec_decode_num_drafts_total"] - before["llamacpp:spec_decode_num_drafts_total"]
    )
    assert server_steps <= sum(r.steps for r in records)


def test_plain_server_records(llama_server):
    server = llama_server()
    (record,) = asyncio.run(send_batch(server.url, 1, 32))
    assert record.draft_n is None and record.acceptance is None
    assert record.latency.burst_sizes == (1,) * 32
    assert record.steps == 31 and record.mean_advance == 1.0


def test_probe_cli_json_matches_server_timings(llama_server, draft_args, capsys):
    server = llama_server(*draft_args)
    before = metrics(server.url)
    assert main(["probe", "--server", server.url, "--tokens", "40", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    after = metrics(server.url)
    assert body["schema"] == "spectop.request/1"
    assert body["committed_tokens"] == 40
    assert (
        body["draft_n"]
        == after["llamacpp:spec_decode_num_draft_tokens_total"]
        - before["llamacpp:spec_decode_num_draft_tokens_total"]
    )
    assert (
        body["draft_n_accepted"]
        == after["llamacpp:spec_decode_num_accepted_tokens_total"]
        - before["llamacpp:spec_decode_num_accepted_tokens_total"]
    )
    assert 0 < body["acceptance"] < 1
    assert body["ttft_ms"] > 0 and body["step_gaps"]["p99_ms"] >= body["step_gaps"]["p50_ms"]
    assert sum(body["burst_sizes"]) == 40


def test_snapshot_cli_says_whether_the_server_drafts(llama_server, draft_args, tiny_models, capsys):
    drafting = llama_server(*draft_args)
    void = llama_server("-md", str(tiny_models.draft_path))
    asyncio.run(send_batch(drafting.url, 1, 24))
    assert main(["snapshot", "--server", drafting.url, "--json", "--window", "0"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert snap["drafting"] is True and snap["spec_types"] == "none,draft-simple"
    assert 0 < snap["acceptance_lifetime"] < 1 and snap["acceptance"] is None  # one poll: no window
    assert snap["slots_total"] == 4 and snap["build"].startswith("b")
    assert main(["snapshot", "--server", void.url, "--window", "0"]) == 0
    assert "no: this server drafts nothing" in capsys.readouterr().out


def test_snapshot_live_tokens_while_requests_run(llama_server, draft_args):
    server = llama_server(*draft_args)

    def seen_live(polls) -> bool:
        return any(p.slots_busy and p.live_tok_s and p.live_tok_s > 0 for p in polls)

    async def scenario():
        async with httpx.AsyncClient(timeout=60) as client:
            collector = LlamaCppCollector(server.url, client=client)
            await collector.poll()
            polls, records = [], []
            # poll until the requests are seen decoding, not for a fixed time: a busy machine may
            # not have admitted them yet, and may run a whole batch between two polls (then the
            # next batch is sent: the premise is a poll that landed while tokens were generated)
            for _ in range(3):
                load = asyncio.create_task(send_batch(server.url, 2, 400))
                while not load.done() and not seen_live(polls[-1:]):
                    await asyncio.sleep(0.05)
                    polls.append(await collector.poll())
                records += await load
                if seen_live(polls):
                    break
            # llama-server's counters move when a slot is released: wait for that, up to 2 s
            committed = sum(r.committed_tokens for r in records)
            for _ in range(40):
                polls.append(await collector.poll())
                if sum(p.window_tokens for p in polls) >= committed:
                    break
                await asyncio.sleep(0.05)
            return polls, records

    polls, records = asyncio.run(scenario())
    # two answers overlap on the server as the client sends them; on a loaded machine it may send
    # the second late, so what must hold is that a poll saw decoding, and its rate, live
    assert seen_live(polls)
    # the windows count exactly what was generated: in flight, then completed from the counter
    assert sum(p.window_tokens for p in polls) == sum(r.committed_tokens for r in records)


def test_snapshot_without_metrics_says_how_to_enable_it(llama_server, capsys):
    server = llama_server(base=("-np", "2", "-c", "2048", "-t", "1"))
    assert main(["snapshot", "--server", server.url, "--json", "--window", "0"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert snap["metrics_status"] == "not available: start the server with --metrics"
    assert snap["drafting"] is False and snap["slots_total"] == 2
