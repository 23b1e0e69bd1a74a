"""Under `--spec-type ngram-simple` llama-server's drafts counter barely moves (it stayed at 1 over
575 verify steps in the issue's run), so a G built on it reads 20 where the requests' own
timings give 1.03. Steps come from every step of the finished requests, T − R − A, instead.

Hand calculation for the window below: two requests finish (R = 2) with T = 594 tokens between
them and A = 17 accepted drafts, D = 40 drafted: steps = 594 − 2 − 17 = 575, G = 1 + 17/575 =
1.0296, verified width = 1 + 40/575 = 1.0696; the drafts counter is 1 before and after.
"""

from __future__ import annotations

import copy
import re

import pytest

from collectors.http import make_client
from collectors.servers import open_collector
from tests.support.captures import read_json, read_text
from tests.support.fault_server import FaultServer, Reply, Script
from tui.cli import main

STEPS, ACCEPTED, DRAFTED = 575, 17, 40
G, WIDTH = 1 + ACCEPTED / STEPS, 1 + DRAFTED / STEPS


def metrics_page(tokens: int, drafted: int, accepted: int, drafts: int = 1) -> Reply:
    """The captured /metrics page with its finish-time counters set (the drafts counter at 1)."""
    text = read_text("draft-simple.metrics.before.txt")
    values = {
        "tokens_predicted_total": tokens,
        "spec_decode_num_draft_tokens_total": drafted,
        "spec_decode_num_accepted_tokens_total": accepted,
        "spec_decode_num_drafts_total": drafts,
    }
    for name, value in values.items():
        text = re.sub(rf"^llamacpp:{name} .*$", f"llamacpp:{name} {value}", text, flags=re.M)
    return Reply(text, content_type="text/plain; version=0.0.4")


def slots(busy: bool) -> Reply:
    """Two slots running tasks 11 and 12 (busy), or the same tasks finished (idle)."""
    rows = copy.deepcopy(read_json("draft-simple.slots.busy.json")[:2])
    for row, task, decoded in zip(rows, (11, 12), (100, 150)):
        row.update(id_task=task, is_processing=busy)
        row["params"]["speculative.types"] = "ngram-simple"
        row["next_token"][0]["n_decoded"] = decoded if busy else 0
    return Reply(rows)


def ngram_server() -> FaultServer:
    before, after = metrics_page(1000, 200, 90), metrics_page(1000 + 594, 200 + DRAFTED, 90 + ACCEPTED)
    # each poll reads /metrics twice (before and after /slots): the first poll sees `before`
    return FaultServer(
        {"/metrics": Script(before, before, after), "/slots": Script(slots(True), slots(False))}
    )


async def test_g_comes_from_every_step_not_from_the_drafts_counter():
    with ngram_server() as server:
        async with make_client() as client:
            collector = open_collector(server.url, "llama.cpp", client=client)
            await collector.poll()
            snap = await collector.poll()
    assert snap.window_drafted_steps == 0  # the counter did not move
    # 594 tokens finished, 100 + 150 of them already decoded when the first poll saw the slots
    assert (snap.window_tokens, snap.window_finished, snap.window_accepted) == (594 - 250, 2, ACCEPTED)
    assert snap.window_steps == STEPS and snap.window_steps_exact
    assert snap.mean_advance == pytest.approx(G)
    assert snap.verified_width == pytest.approx(WIDTH)
    assert snap.advance_per_drafted_step is None  # no step that drafted was counted: unknown, not 18


def test_snapshot_prints_g_103(capsys):
    with ngram_server() as server:
        assert main(["snapshot", "--server", server.url, "--window", "0.05", "--meter", "none"]) == 0
    rows = {line.split("  ")[0].strip(): line for line in capsys.readouterr().out.splitlines()}
    assert "1.03" in rows["mean committed advance G"] and "20.00" not in rows["mean committed advance G"]
    assert "1.07" in rows["verified width"]
    assert "ngram-simple" in rows["drafting"]
