"""The multi-arm sweep's arms and plan: named arms, generated commands (per the pinned llama-server's
`--help`: `--draft-max` removed, `--spec-draft-n-max N`, `--spec-type ngram-simple`), classes and order."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from collectors.errors import SpectopError
from collectors.launch.process import free_port
from collectors.simulator.multi_arm import MultiArmSimulator
from collectors.sweep.codec import to_json
from collectors.sweep.events import SweepEnded
from collectors.sweep.named_arms import make_named_arms, parse_arm, with_draft_length
from collectors.sweep.plan import ArmsPlan, SweepPlan
from collectors.sweep.prompts import BUILT_IN, load_classes
from collectors.sweep.runner import run_sweep
from collectors.sweep.sentences import arms_sentences

DRAFT = "llama-server -m t.gguf -md d.gguf --spec-type draft-simple --port 8090"


def test_named_arm_is_a_url_or_a_command() -> None:
    running = parse_arm("draft-4=http://127.0.0.1:8081")
    assert (running.name, running.url, running.launched) == ("draft-4", "http://127.0.0.1:8081", False)
    launched = parse_arm("fast=llama-server -m t.gguf --port 8095 --spec-type ngram-simple")
    assert launched.launched and launched.url.endswith(":8095")
    assert launched.argv[-2:] == ("--spec-type", "ngram-simple")


@pytest.mark.parametrize("text", ["draft-4", "=http://h:1", "plain=http://h:1", "a b=http://h:1", "x="])
def test_bad_arm_is_one_clear_error(text: str) -> None:
    with pytest.raises(SpectopError):
        parse_arm(text)


def test_draft_length_replaces_any_length_flag() -> None:
    argv = ["llama-server", "-m", "t.gguf", "--draft-max", "16", "--spec-draft-n-max=3", "--port", "1"]
    assert with_draft_length(argv, 4) == [
        "llama-server",
        "-m",
        "t.gguf",
        "--port",
        "1",
        "--spec-draft-n-max",
        "4",
    ]


def test_generated_arms_from_one_draft_command() -> None:
    arms = make_named_arms(draft_cmd=DRAFT, draft_max="2,8", ngram=True, arms=["mine=http://127.0.0.1:9"])
    assert [a.name for a in arms] == ["plain", "draft-2", "draft-8", "ngram", "mine"]
    plain, draft2, draft8, ngram, _ = arms
    # plain is the draft command without its speculative flags
    assert plain.derived and plain.argv == ("llama-server", "-m", "t.gguf", "--port", "8090")
    assert draft2.argv[-2:] == ("--spec-draft-n-max", "2") and "-md" in draft2.argv
    assert draft8.argv[-2:] == ("--spec-draft-n-max", "8")
    # n-gram copying needs no draft model: the plain command with the server's own n-gram type
    assert ngram.argv == (*plain.argv, "--spec-type", "ngram-simple")


def test_arm_sets_that_cannot_run_are_refused() -> None:
    with pytest.raises(SpectopError, match="two arms"):
        make_named_arms(plain_url="http://h:1", arms=["a=http://h:2", "a=http://h:3"])
    with pytest.raises(SpectopError, match="--draft-max needs"):
        make_named_arms(plain_url="http://h:1", draft_max="2,4")
    with pytest.raises(SpectopError, match="--ngram"):
        make_named_arms(plain_url="http://h:1", ngram=True)
    with pytest.raises(SpectopError, match="an arm besides plain"):
        make_named_arms(plain_url="http://h:1")
    with pytest.raises(SpectopError, match="--draft-max"):
        make_named_arms(draft_cmd=DRAFT, draft_max="2,2")


def test_schedule_brackets_each_block_and_shuffles_per_pass() -> None:
    classes = load_classes("code,prose,edit")
    arms = ("draft-2", "draft-4", "draft-8", "ngram")
    plan = ArmsPlan(SweepPlan(batches=(1, 2), passes=3), arms, classes, seed=7)
    keys = plan.schedule()
    assert Counter((k.prompt_class, k.batch, k.arm) for k in keys if k.arm != "plain") == Counter(
        {(c, b, a): 3 for c in ("code", "prose", "edit") for b in (1, 2) for a in arms}
    )
    block = len(arms) + 2
    orders = []
    for start in range(0, len(keys), block):
        chunk = keys[start : start + block]
        assert (chunk[0].arm, chunk[0].phase, chunk[-1].arm, chunk[-1].phase) == (
            "plain",
            "before",
            "plain",
            "after",
        )
        assert len({(k.pass_index, k.prompt_class, k.batch) for k in chunk}) == 1
        orders.append(tuple(k.arm for k in chunk[1:-1]))
    assert len(set(orders)) > 1  # the arms' order is not the same in every block
    assert keys == plan.schedule()  # the same seed gives the same order


def test_classes_from_built_in_sets_and_from_a_jsonl_class_field(tmp_path) -> None:
    assert [c.prompts for c in load_classes("code,edit")] == [BUILT_IN["code"], BUILT_IN["edit"]]
    path = tmp_path / "mine.jsonl"
    lines = [
        {"prompt": "a", "class": "chat"},
        {"prompt": "b", "class": "rag"},
        {"prompt": "c", "class": "chat"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert [(c.name, c.prompts) for c in load_classes(str(path))] == [("chat", ("a", "c")), ("rag", ("b",))]
    path.write_text('{"prompt": "a", "class": 3}\n')
    with pytest.raises(SpectopError, match="line 1"):
        load_classes(str(path))
    with pytest.raises(SpectopError, match="nope"):
        load_classes("code,nope")


def test_an_arm_that_fails_is_recorded_and_the_others_are_kept(tmp_path) -> None:
    with MultiArmSimulator(seed=1, speedup=20) as sim:
        dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        arms = make_named_arms(
            plain_url=sim.urls["plain"], arms=[f"ngram={sim.urls['ngram']}", f"gone={dead}"]
        )
        base = SweepPlan(batches=(1,), max_tokens=16, passes=1, idle_s=0.0, warmup_tokens=4)
        plan = ArmsPlan(base, ("ngram", "gone"), load_classes("edit"))
        events = list(run_sweep(plan, arms, None, tmp_path))
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    summary = to_json(ended.summary)
    assert list(summary["failed_arms"]) == ["gone"] and dead in summary["failed_arms"]["gone"]
    points = {(t["arm"], t["points"]) for t in summary["rows"]}
    assert {("plain", 2), ("ngram", 1), ("gone", 0)} <= points
    assert any(line.startswith("Arm gone failed") for line in arms_sentences(ended.summary))
