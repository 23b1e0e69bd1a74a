"""`spectop tune RESULTS`: the schedule, the engine's setting, the predicted saving, and the files.

Truths by hand from note 25's cells (collectors/docs/note25.md; mJ/token = W / tok/s × 1000):
draft 380.6, 278.9, 227.1, 163.6, 113.9 and plain 370.0, 390.2, 202.8, 108.8, 95.2 at 1, 2, 4,
8, 16 requests. The schedule drafts 4 at 1 and 2 and is off from 4, so it runs 380.6, 278.9,
202.8, 108.8, 95.2.
"""

from __future__ import annotations

import json

import pytest

from collectors.ledgerdb.store import EnergyStore, Window
from collectors.tune.derive import derive_schedule
from collectors.tune.report import read_schedule
from tests.support.sweep_rows import note25_rows
from tests.support.tune_runs import DATA, note25_run, save_run
from tui.cli import main

VLLM_FLAGS = (
    '  --speculative-config \'{"num_speculative_tokens": 4, '
    '"num_speculative_tokens_per_batch_size": [[1, 3, 4], [4, 16, 0]]}\''
)


def test_the_schedule_the_setting_and_the_saving_over_every_batch_alike(tmp_path, capsys):
    run = note25_run(tmp_path / "run")
    assert main(["tune", str(run), "--engine", "vllm", "--version", "0.33.0", "--draft-tokens", "4"]) == 0
    out = capsys.readouterr().out
    assert (
        "         1   4  draft          380.6         380.6    370.0  kept: within ±5 % of the cheapest"
        in out
    )
    assert "         4   0  plain          202.8         227.1    202.8" in out
    assert "Crossover ≈ 3.26 concurrent requests (2.99–3.55 within ±5 %); drafting off from 4." in out
    assert "vLLM (0.33.0): add to the drafting server's command:\n" + VLLM_FLAGS + "\n" in out
    # each batch a fifth of the tokens: always-draft 1164.1 / 5 = 232.8, the schedule 1066.3 / 5 =
    # 213.3, plain 1167.0 / 5 = 233.4; 1 - 213.3/232.8 = 8.4 %, 1 - 213.3/233.4 = 8.6 %.
    # ±: the schedule differs from always-draft at 4, 8 and 16, where draft has one point (the band
    # as two standard errors: 2.5 % of it) and plain two equal ones (0): 2·sqrt(0.04·(5.68² + 4.09²
    # + 2.85²))/232.8 = 1.3 %
    assert "  saves 8.4 % ± 1.3 % against always-draft (232.8 → 213.3 mJ/token)" in out
    assert "  saves 8.6 % ± " in out and "against plain (233.4 → 213.3 mJ/token)" in out
    assert (run / "schedule-vllm.txt").read_text() == VLLM_FLAGS.strip() + "\n"
    schedule, document = read_schedule(run)
    assert schedule == derive_schedule(run, draft_tokens=4)
    assert document["engine"] == "vllm" and document["version"] == "0.33.0"


def test_a_given_profile_can_make_the_schedule_cost_against_plain(tmp_path, capsys):
    run = note25_run(tmp_path / "run")
    assert (
        main(["tune", str(run), "--engine", "vllm", "--draft-tokens", "4", "--profile", "1:0.5,4:0.3,16:0.2"])
        == 0
    )
    out = capsys.readouterr().out
    # half the tokens at 1, where the schedule keeps drafting within the band (380.6 against 370.0):
    # schedule 0.5·380.6 + 0.3·202.8 + 0.2·95.2 = 270.2; always-draft 0.5·380.6 + 0.3·227.1 + 0.2·113.9
    # = 281.2 (3.9 % saved); plain 0.5·370.0 + 0.3·202.8 + 0.2·95.2 = 264.9 (2.0 % more)
    assert "saves 3.9 % ± " in out and "against always-draft (281.2 → 270.2 mJ/token)" in out
    assert "costs 2.0 % ± " in out and "against plain (264.9 → 270.2 mJ/token)" in out
    assert "Predicted over the load (given (1:0.5,4:0.3,16:0.2)):" in out


def test_the_ledgers_batch_levels_are_a_profile(tmp_path, capsys):
    run = note25_run(tmp_path / "run")
    ledger = tmp_path / "ledger.sqlite"
    now = 1_000 * (int(__import__("time").time()) // 1_000)
    with EnergyStore(ledger) as store:  # 500, 300 and 200 tokens at 1, 4 and 16: the shares above
        store.add(
            [
                Window(
                    "http://gpu:8080",
                    now - 300 + 60 * i,
                    now - 250 + 60 * i,
                    level,
                    1.0,
                    tokens,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                )
                for i, (level, tokens) in enumerate([(1, 500), (4, 300), (16, 200), (0, 0)])
            ]
        )
    args = ["tune", str(run), "--engine", "vllm", "--draft-tokens", "4", "--profile", "ledger:1d"]
    assert main([*args, "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "Predicted over the load (the energy ledger, last 1d):" in out
    assert "against always-draft (281.2 → 270.2 mJ/token)" in out


def test_engine_version_and_draft_length_come_from_the_sweep(tmp_path, capsys):
    meta = {
        "arms": [
            {"name": "plain", "url": "http://h:1"},
            {
                "name": "draft",
                "url": "http://h:2",
                "argv": ["python", "-m", "sglang.launch_server", "--speculative-num-steps", "4"],
            },
        ],
        "servers": {"draft": {"backend": "sglang", "build": "0.5.23"}},
    }
    run = save_run(tmp_path / "run", note25_rows(), meta)
    assert main(["tune", str(run)]) == 0
    out = capsys.readouterr().out
    assert "SGLang (0.5.23): add to the drafting server's command:" in out
    assert (
        "--speculative-adaptive --speculative-adaptive-config sglang-adaptive.json --speculative-num-steps 4"
        in out
    )
    written = json.loads((run / "sglang-adaptive.json").read_text())
    assert written == {"1": {"candidate_steps": [4]}, "4": {"candidate_steps": [0]}}
    # the sweep's version is not another engine's
    assert main(["tune", str(run), "--engine", "vllm"]) == 0
    assert "vLLM (version not known)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--engine", "tgi"], "no engine called 'tgi'"),
        ([], "the sweep does not say which engine it measured"),
        (["--engine", "vllm", "--profile", "sometimes"], "--profile 'sometimes' is not a recording"),
        (["--engine", "vllm", "--class", "code"], "no prompt class"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, extra, says):
    run = note25_run(tmp_path / "run")
    assert main(["tune", str(run), "--draft-tokens", "4", *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_sweep_without_a_crossover_and_a_missing_folder(tmp_path, capsys):
    assert main(["tune", str(DATA / "paired-20261201T223229Z"), "--draft-tokens", "4"]) == 2
    assert "has no crossover to schedule around: drafting costs energy up to 1" in capsys.readouterr().err
    assert main(["tune", str(tmp_path / "nothing")]) == 2
    assert "no sweep results at" in capsys.readouterr().err
