"""`spectop snapshot` against fake vLLM and SGLang servers on a real loopback HTTP port."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from collectors.servers.llamacpp import collector as llamacpp
from tests.support.captures import raw
from tests.support.fake_servers import FakeVllm
from tests.support.fake_sglang import FakeSglang, SglangRank, SglangTokenizer
from tests.support.loopback import serving
from tests.support.vllm_engines import D0, D1, E0, E1
from tui.cli import main
from tui.commands.snapshot import render

# two engines, and what every scrape adds to them (tests/support/vllm_engines.py)
ENGINES, STEP = [E0, E1], [D0, D1]


def test_snapshot_of_vllm_prints_the_drafting_figures(capsys):
    with serving(FakeVllm(list(ENGINES), step=STEP, dev_mode=True)) as url:
        assert main(["snapshot", "--server", url, "--window", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "vllm at http://127.0.0.1:" in out
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines() if line.strip()}
    assert "63.9 %" in rows["acceptance"]  # 230 / 360, both engines summed
    assert "2.77" in rows["mean committed advance G"]  # 1 + 230/130, every step
    assert "2.92" in rows["G per drafted step"]  # 1 + 230/120
    assert "3.77" in rows["verified width"]  # 1 + 360/130
    assert "0.85 0.60 0.32" in rows["survival S_j"]  # (110, 78, 42) / 130
    assert "≈" not in rows["mean committed advance G"]
    assert "yes (eagle3 k=3)" in rows["drafting"]
    assert "7 busy of 512" in rows["slots"]  # max_num_seqs 256 on each of two engines
    assert "/slots" not in out


def test_snapshot_of_vllm_as_json(capsys):
    with serving(FakeVllm(list(ENGINES), step=STEP)) as url:
        assert main(["snapshot", "--server", url, "--window", "0.05", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["backend"] == "vllm" and body["drafting"] is True
    assert body["schema"] == "spectop.snapshot/2"
    assert (body["window_drafted"], body["window_accepted"], body["window_steps"]) == (360, 230, 130)
    assert body["window_drafted_steps"] == 120 and body["window_approximate"] is False
    assert body["window_tokens"] == 360 and body["live_tok_s"] > 0 and body["live_tok_s_exact"] is True
    assert body["acceptance"] == pytest.approx(230 / 360, abs=1e-4)
    assert body["mean_advance"] == pytest.approx(1 + 230 / 130, abs=1e-4)
    assert body["advance_per_drafted_step"] == pytest.approx(1 + 230 / 120, abs=1e-4)
    assert body["window_per_position"] == [110, 78, 42]


def test_snapshot_of_sglang_prints_its_gauges(capsys):
    fake = FakeSglang(
        [SglangRank(decode_tokens=1000, running=3, accept_length=2.8, accept_rate=0.6)],
        SglangTokenizer(900, 0, 300, 5000),
        rank_step=[SglangRank(decode_tokens=120, running=3, accept_length=2.8, accept_rate=0.6)],
    )
    with serving(fake) as url:
        assert main(["snapshot", "--server", url, "--window", "0.05"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines() if line.strip()}
    assert "sglang at http://127.0.0.1:" in out
    assert "60.0 %" in rows["acceptance"] and "2.80" in rows["mean committed advance G"]
    assert "4.00" in rows["verified width"]
    assert "yes (EAGLE3 steps=3 topk=1 draft_tokens=4)" in rows["drafting"]
    assert "(lower bound)" in rows["tokens/s (live)"]
    assert "40 decode iterations" in out


def test_an_approximate_llama_window_is_marked_and_lifetime_rows_are_their_own():
    # before → busy: slots changed tasks, so a request may have run unseen between the polls
    snap = llamacpp.derive(
        raw("draft-simple", "before", "idle", 0.0), raw("draft-simple", "busy", "busy", 1.0), "u"
    )
    out = io.StringIO()
    Console(file=out, width=300).print(render(snap))
    rows = {line.split("  ")[0].strip(): line for line in out.getvalue().splitlines() if line.strip()}
    assert "≈ 1.50" in rows["mean committed advance G"]  # 1 + 64 / 127
    assert "≈ 2.78" in rows["G per drafted step"]  # 1 + 64 / 36
    assert "77.8 %" in rows["acceptance (lifetime)"]  # 137 / 176 since the server started
    assert "run entirely between the polls" in out.getvalue()
