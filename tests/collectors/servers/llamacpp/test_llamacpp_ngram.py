"""Under `--spec-type ngram-simple` llama-server's drafts counter barely moves (it stayed at 1 over
575 verify steps in the issue's run), so a G built on it reads 20 where the requests' own
timings give 1.03. Steps come from every step of the finished requests, T − R − A, instead.

Hand calculation for the window below: two requests finish (R = 2) with T = 594 tokens between
them and A = 17 accepted drafts, D = 40 drafted: steps = 594 − 2 − 17 = 575, G = 1 + 17/575 =
1.0296, verified width = 1 + 40/575 = 1.0696; the drafts counter is 1 before and after.
"""

from __future__ import annotations

import pytest

from collectors.http import make_client
from collectors.servers import open_collector
from tests.support.ngram_llama import ACCEPTED, STEPS, WIDTH, G, ngram_server
from tui.cli import main


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
