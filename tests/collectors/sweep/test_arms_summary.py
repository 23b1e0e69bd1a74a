"""The multi-arm summary on hand-made points: best arm by energy and by speed, the 60 % line, the
width advice and the setting; figures hand-computed from the rows below."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.sweep import checks
from collectors.sweep.records import summary_from_json
from collectors.sweep.sentences import arms_sentences, to_markdown
from collectors.sweep.settings import off_above, setting_lines
from collectors.sweep.summary import summarize
from collectors.sweep.tables import to_table_csv
from tests.support.sweep_rows import as_point, points

SERVER = {"backend": "llama.cpp", "command": "llama-server ..."}


def _row(
    cls: str,
    arm: str,
    tok_s: float,
    mj: float,
    accepted: int = 0,
    drafted: int = 0,
    steps: int = 100,
    phase: str = "",
    flags: tuple[str, ...] = (),
) -> dict[str, Any]:
    tokens = 300
    seconds = tokens / tok_s
    energy_j = mj * tokens / 1000
    return {
        "pass": 0, "batch": 1, "arm": arm, "phase": phase, "prompt_class": cls,
        "committed_tokens": tokens, "window_s": seconds, "energy_window_s": seconds,
        "energy_j": energy_j, "energy_covered": True, "net_energy_j": None,
        "drafted": drafted if arm != "plain" else None, "accepted": accepted if arm != "plain" else None,
        "steps": steps, "chunk_gaps_ms": [], "requests": [],
        "flags": [{"code": f, "message": f} for f in flags], "server": SERVER,
    }  # fmt: skip


def _rows() -> list[dict[str, Any]]:
    return [
        _row("code", "plain", 60.0, 360.0, phase="before"),
        _row("code", "plain", 60.0, 360.0, phase="after"),
        # draft-4: 0.80x energy, 1.70x speed; 200 of 300 drafted accepted in 75 steps: G = 1 + 200/75
        _row("code", "draft-4", 102.0, 288.0, accepted=200, drafted=300, steps=75),
        # draft-8: 1.04x energy (within the band), faster still; acceptance 50 %: G = 1 + 260/60
        _row("code", "draft-8", 120.0, 374.4, accepted=260, drafted=520, steps=60),
        _row("prose", "plain", 60.0, 360.0, phase="before"),
        _row("prose", "plain", 60.0, 360.0, phase="after"),
        # faster by 1.3x and 10 % dearer at 45 %: best by speed, not by energy
        _row("prose", "draft-4", 78.0, 396.0, accepted=135, drafted=300, steps=75),
        _row("prose", "draft-8", 50.0, 612.0, accepted=150, drafted=600, steps=75),
        # n-gram found nothing to copy in prose: void here, but it drafts on edits
        _row("prose", "ngram", 59.0, 367.0, flags=("void",)),
        _row("edit", "plain", 60.0, 360.0, phase="before"),
        _row("edit", "plain", 60.0, 360.0, phase="after"),
        _row("edit", "ngram", 290.0, 118.0, accepted=280, drafted=280, steps=35),
    ]


def test_best_by_energy_and_by_speed_per_class() -> None:
    summary = summarize(points(_rows()))
    verdicts = {v["prompt_class"]: v for v in summary["verdicts"]}
    assert (verdicts["code"]["best_energy"], verdicts["code"]["best_speed"]) == ("draft-4", "draft-8")
    assert verdicts["code"]["differ"]
    # prose: no arm saves beyond the band, so plain; draft-4 is the fastest by more than 5 %
    assert (verdicts["prose"]["best_energy"], verdicts["prose"]["best_speed"]) == ("plain", "draft-4")
    assert (verdicts["edit"]["best_energy"], verdicts["edit"]["best_speed"]) == ("ngram", "ngram")
    assert not verdicts["edit"]["differ"]


def test_table_figures_and_the_void_waiver() -> None:
    rows = {(t["prompt_class"], t["arm"]): t for t in summarize(points(_rows()))["rows"]}
    code4 = rows[("code", "draft-4")]
    assert code4["energy_ratio"] == 288.0 / 360.0 and abs(code4["speedup"] - 1.7) < 1e-9
    assert abs(code4["mean_advance"] - (1 + 200 / 75)) < 1e-9 and code4["acceptance"] == 200 / 300
    assert code4["verdict"] == "saves" and rows[("code", "draft-8")]["verdict"] == "even"
    # the n-gram arm drafts on edits, so drafting nothing on prose is a measurement, not a void arm
    assert rows[("prose", "ngram")]["trusted"] and rows[("prose", "ngram")]["verdict"] == "even"


def test_void_arm_everywhere_stays_excluded() -> None:
    rows = [r for r in _rows() if r["prompt_class"] == "prose"]
    prose = {t["arm"]: t for t in summarize(points(rows))["rows"]}
    assert not prose["ngram"]["trusted"] and prose["ngram"]["excluded"] == ["void"]


def test_sixty_percent_line_width_advice_and_setting() -> None:
    summary = summarize(points(_rows()))
    prose = next(v for v in summary["verdicts"] if v["prompt_class"] == "prose")
    assert [b["arm"] for b in prose["below_line"]] == ["draft-4", "draft-8"]
    assert prose["below_line_all_cost"]
    code = next(v for v in summary["verdicts"] if v["prompt_class"] == "code")
    # draft-4 → 8: round energy 288 x 3.667 = 1056 to 374.4 x 5.333 = 1996.8 (+89 %) for 1.67 tokens
    assert code["width_advice"] == ["draft-max 4 → 8 costs 89 % more per round and adds 1.67 tokens: keep 4"]
    assert code["settings"] == [
        "llama-server at 1 concurrent request: --spec-draft-n-max 4 (older builds: --draft-max 4)"
    ]
    sentences = arms_sentences(summary_from_json(summary))
    assert any(
        s.startswith("prose at 1 concurrent request: best by energy plain, by speed draft-4")
        for s in sentences
    )
    assert "  Below 60 % acceptance (draft-4 45 %, draft-8 25 %): every one cost energy." in sentences
    assert "| prose | 1 | draft-4 | 78.0 | 45 % | 396.0 | 1.10x | 1.30x |" in to_markdown(
        summary_from_json(summary)
    )
    assert (
        to_table_csv(summary_from_json(summary))
        .splitlines()[0]
        .startswith("prompt_class,batch,arm,tok_s,acceptance")
    )


def test_settings_per_engine() -> None:
    assert setting_lines("draft-4", "vllm", None, 2) == [
        "vLLM at 2 concurrent requests: --speculative-config '{\"num_speculative_tokens\": 4}' (with your draft model)"
    ]
    assert setting_lines("draft-4", "sglang", None, 1) == [
        "SGLang at 1 concurrent request: --speculative-num-steps 4 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 5"
    ]
    assert setting_lines("ngram", "llama.cpp", None, 1) == [
        "llama-server at 1 concurrent request: --spec-type ngram-simple (and no -md)"
    ]
    assert "run without --speculative-config" in setting_lines("plain", "vllm", None, 1)[0]
    # a name that says nothing about its drafting, or an unknown engine: the arm's own command
    assert setting_lines("fast", "llama.cpp", "llama-server -x", 1) == [
        "at 1 concurrent request: run the fast arm as measured: llama-server -x"
    ]
    assert setting_lines("draft-4", "other", "srv", 1) == [
        "at 1 concurrent request: run the draft-4 arm as measured: srv"
    ]
    # vLLM by version, as each release's vllm/config/speculative.py has it (collectors/docs/draft-strategies.md)
    assert off_above("vllm", 4, "0.33.0", 4) == (
        'vLLM: add "num_speculative_tokens_per_batch_size": [[1, 4, 4], [5, 5, 0]] to '
        "--speculative-config (no drafting above 4 concurrent requests)"
    )
    assert off_above("vllm", 4, "0.11.0") == (
        "vLLM 0.11: run without --speculative-config above 4 concurrent requests "
        "(its disable_by_batch_size is declared but read by nothing in 0.11)"
    )
    assert "disable_by_batch_size" not in off_above("vllm", 4, "0.33.0")
    unknown = off_above("vllm", 4, None)
    assert unknown.startswith("vLLM: run without --speculative-config above 4 concurrent requests")
    assert off_above("llama.cpp", 4) == "llama-server: run without a draft above 4 concurrent requests"


def test_drafting_best_at_small_batches_only_turns_off_above() -> None:
    rows = [r for r in _rows() if r["prompt_class"] == "code"]
    # at 4 requests plain is best: draft-4 1.10x, draft-8 1.30x
    rows += [
        {**_row("code", "plain", 200.0, 120.0, phase="before"), "batch": 4},
        {**_row("code", "draft-4", 180.0, 132.0, accepted=200, drafted=300, steps=75), "batch": 4},
        {**_row("code", "draft-8", 150.0, 156.0, accepted=260, drafted=520, steps=60), "batch": 4},
    ]
    summary = summarize(points(rows))
    assert summary["turn_off"] == [
        {
            "prompt_class": "code",
            "batch": 1,
            "setting": "llama-server: run without a draft above 1 concurrent request",
        }
    ]
    assert (
        "code: drafting pays up to 1 concurrent request. Setting: llama-server: run without a draft above 1 "
        "concurrent request" in arms_sentences(summary_from_json(summary))
    )


def test_void_message_names_what_an_ngram_arm_does() -> None:
    ngram = checks.drafting_flags(as_point(_row("prose", "ngram", 59.0, 367.0)))
    assert [f.code for f in ngram] == ["void"]
    # n-gram copying has no draft model: the -md advice would send the user the wrong way
    assert "-md" not in ngram[0].message and "no repeated text to copy" in ngram[0].message
    # an arm named otherwise whose command copies n-grams gets the same message
    fast = {
        **_row("prose", "fast", 59.0, 367.0),
        "server": {"command": "llama-server --spec-type ngram-simple"},
    }
    assert checks.drafting_flags(as_point(fast))[0].message.startswith(
        "the fast arm drafted nothing: n-gram copying"
    )
    # a draft-model arm that drafted nothing is a setup fault, and the message says the fix
    draft = checks.drafting_flags(as_point(_row("code", "draft-4", 60.0, 360.0)))
    assert "--spec-type draft-simple as well as -md" in draft[0].message


def test_arm_idle_on_one_class_but_drafting_on_another_is_said() -> None:
    summary = summarize(points(_rows()))
    assert summary["void_waived"] == [
        {"arm": "ngram", "prompt_class": "prose", "drafts_on": ["edit"], "ngram": True}
    ]
    assert (
        "ngram on prose: n-gram copying found nothing to copy there, but it drafts on edit, so that "
        "point measures its plain decoding and counts (not a void arm)."
    ) in arms_sentences(summary_from_json(summary))
    # an arm void everywhere is not waived
    assert summarize(points([r for r in _rows() if r["prompt_class"] == "prose"]))["void_waived"] == []


def test_round_energy_per_draft_length_for_the_live_advice() -> None:
    # J_k = mJ/token x G at batch 1; code's draft-4: 288 x (1 + 200/75) = 1056, prose's draft-4:
    # 396 x (1 + 135/75) = 1108.8: median 1082.4; draft-8: code 374.4 x (1 + 260/60) = 1996.8 and
    # prose 612 x (1 + 150/75) = 1836: median 1916.4; n-gram has no length and is left out
    assert summarize(points(_rows()))["round_energy_mj"] == pytest.approx({"4": 1082.4, "8": 1916.4})
