"""The simulator's `note001` profile serves seed 001's strategy table (collectors/docs/draft-strategies.md), one
arm per strategy on one chip, each request by its prompt's class."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from collectors.simulator.multi_arm import MultiArmSimulator
from collectors.simulator.profiles import get_profile
from collectors.sweep.prompts import BUILT_IN
from tests.support.processes import reaped

# seed 001's table as published: (tok/s, chip mJ/token) at one request
SEED001 = {
    ("code", "plain"): (62.0, 362.5),
    ("code", "draft-4"): (107.0, 302.0),
    ("code", "draft-16"): (45.3, 778.8),
    ("prose", "draft-2"): (78.8, 447.5),
    ("prose", "draft-16"): (24.6, 1422.1),
    ("prose", "ngram"): (60.8, 366.9),
    ("edit", "plain"): (61.0, 368.0),
    ("edit", "draft-8"): (137.0, 228.3),
    ("edit", "ngram"): (290.2, 119.5),
}
ARMS = ["plain", "draft-2", "draft-4", "draft-8", "draft-16", "ngram"]


def test_each_cell_is_the_tables_speed_and_energy_at_one_request() -> None:
    profile = get_profile("note001")
    assert ("plain", *profile.arm_names) == tuple(ARMS)
    for (cls, arm), (tok_s, mj) in SEED001.items():
        curves = profile.class_named(cls).curves(arm)
        assert curves.tok_s.at(1) == pytest.approx(tok_s)
        assert 1000 * curves.power_w.at(1) / curves.tok_s.at(1) == pytest.approx(mj), (cls, arm)


def test_built_in_prompts_route_to_their_class() -> None:
    # the built-in code prompt asks for type hints, like the edit: the known prompt decides, not the words
    profile = get_profile("note001")
    for cls in ("code", "prose", "edit"):
        for prompt in BUILT_IN[cls]:
            assert profile.prompt_class(prompt).name == cls, prompt[:40]


def test_an_arm_serves_each_class_at_its_cell() -> None:
    speedup = 8.0
    with MultiArmSimulator(seed=2, speedup=speedup, noise=0.0) as sim, httpx.Client(timeout=30) as client:
        assert list(sim.urls) == ARMS
        for (cls, arm), (tok_s, mj) in SEED001.items():
            before = sim.accelerator.read()
            answer = client.post(
                sim.urls[arm] + "/completion",
                json={"prompt": BUILT_IN[cls][0], "n_predict": 64, "ignore_eos": True},
            ).json()
            after = sim.accelerator.read()
            tokens = answer["tokens_predicted"]
            busy_s = after.busy_s - before.busy_s
            # over the seconds the chip was busy: the table's figures whatever this machine's load
            assert tokens / busy_s / speedup == pytest.approx(tok_s, rel=0.02), (cls, arm)
            joules_mj = after.busy_energy_mj - before.busy_energy_mj
            assert joules_mj / tokens == pytest.approx(mj, rel=0.02), (cls, arm)
            drafted = answer["timings"].get("draft_n")
            # nothing to copy in prose: the n-gram arm drafts nothing, as the note had no acceptance
            assert bool(drafted) == (arm != "plain" and (cls, arm) != ("prose", "ngram")), (cls, arm)


@pytest.mark.slow
def test_serve_only_prints_one_line_per_arm_and_the_meter() -> None:
    argv = [sys.executable, "-m", "tui", "demo", "--serve-only", "--profile", "note001", "--speedup", "20"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with reaped(popen) as proc:
        assert proc.stdout is not None
        urls = dict(proc.stdout.readline().split() for _ in range(len(ARMS) + 1))
        assert list(urls) == [*ARMS, "meter"]
        assert urls["meter"].endswith("/metrics?period=0.1")
        with httpx.Client(timeout=10) as client:
            for arm in ARMS:
                slots = client.get(urls[arm] + "/slots").json()
                assert slots[0]["speculative"] is (arm != "plain"), arm
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0 and out == ""
    assert "Traceback" not in err and "--arm ngram=" + urls["ngram"] in err
