"""Sweep plans, prompt sets and arms."""

from __future__ import annotations

import pytest

from collectors.errors import SpectopError
from collectors.sweep.arms import make_arms
from collectors.sweep.plan import PointKey, SweepPlan, parse_batches, quick
from collectors.sweep.prompts import BUILT_IN, load_prompts


def test_schedule_pairs_plain_around_draft_and_reverses_the_second_pass():
    keys = SweepPlan(batches=(1, 4, 2), passes=2).schedule()
    assert len(keys) == 3 * 3 * 2
    assert keys[:3] == [
        PointKey(0, 1, "plain", "before"),
        PointKey(0, 1, "draft"),
        PointKey(0, 1, "plain", "after"),
    ]
    assert [k.batch for k in keys[::3]] == [1, 2, 4, 4, 2, 1]


def test_quick_preset_is_short():
    plan = quick()
    assert plan.batches == (1, 2, 4, 8) and plan.passes == 1 and plan.max_tokens == 96
    assert len(plan.schedule()) == 12


@pytest.mark.parametrize("bad", [dict(batches=()), dict(batches=(0, 2)), dict(max_tokens=1), dict(passes=0)])
def test_bad_plans_name_the_fix(bad):
    with pytest.raises(SpectopError) as err:
        SweepPlan(**bad)
    assert "e.g." in str(err.value)


def test_parse_batches():
    assert parse_batches("1, 2,4") == (1, 2, 4)
    with pytest.raises(SpectopError, match="comma-separated"):
        parse_batches("1,two")


def test_prompt_sets_and_files(tmp_path):
    assert set(BUILT_IN) >= {"power", "code", "prose", "edit", "mixed"}
    assert load_prompts("code").for_request(5) == BUILT_IN["code"][1]
    text = tmp_path / "mine.txt"
    text.write_text("first prompt\nstill first\n\nsecond prompt\n")
    assert load_prompts(str(text)).prompts == ("first prompt\nstill first", "second prompt")
    jsonl = tmp_path / "mine.jsonl"
    jsonl.write_text('{"prompt": "a"}\n{"prompt": "b"}\n')
    assert load_prompts(str(jsonl)).prompts == ("a", "b")
    jsonl.write_text('{"text": "a"}\n')
    with pytest.raises(SpectopError, match="prompt"):
        load_prompts(str(jsonl))
    with pytest.raises(SpectopError, match="no prompt set or file"):
        load_prompts("nonexistent")


def test_plain_arm_is_derived_from_the_draft_command():
    plain, draft = make_arms(
        draft_cmd="llama-server -m t.gguf -md d.gguf --spec-type draft-simple --port 9001 -np 4"
    )
    assert draft.argv == (
        "llama-server",
        "-m",
        "t.gguf",
        "-md",
        "d.gguf",
        "--spec-type",
        "draft-simple",
        "--port",
        "9001",
        "-np",
        "4",
    )
    assert plain.derived and plain.argv == ("llama-server", "-m", "t.gguf", "--port", "9001", "-np", "4")
    assert "-md" in plain.dropped and plain.url == draft.url == "http://127.0.0.1:9001"
    assert "llama-server -m t.gguf --port 9001 -np 4" == plain.command


def test_arms_from_urls_and_bad_combinations():
    plain, draft = make_arms(plain_url="http://127.0.0.1:8080/", draft_url="http://127.0.0.1:8081")
    assert (plain.url, draft.url, plain.launched) == ("http://127.0.0.1:8080", "http://127.0.0.1:8081", False)
    with pytest.raises(SpectopError, match="needs a draft arm"):
        make_arms(plain_url="http://127.0.0.1:8080")
    with pytest.raises(SpectopError, match="needs a plain arm"):
        make_arms(draft_url="http://127.0.0.1:8081")
    with pytest.raises(SpectopError, match="no speculative flags"):
        make_arms(draft_cmd="llama-server -m t.gguf")
    with pytest.raises(SpectopError, match="not both"):
        make_arms(draft_url="http://x:1", draft_cmd="llama-server -md d")


def test_the_quick_option_refines_as_its_help_says():
    import argparse

    from tui.commands.sweep import add_options, build_plan

    parser = argparse.ArgumentParser()
    add_options(parser)
    # --quick is "batches 1,2,4,8, 96 tokens, one pass, refined": --refine left off keeps the preset's
    quick_plan = build_plan(parser.parse_args(["--quick"]))
    assert quick_plan.refine and quick_plan.batches == (1, 2, 4, 8) and quick_plan.max_tokens == 96
    assert not build_plan(parser.parse_args([])).refine
    assert build_plan(parser.parse_args(["--refine"])).refine
