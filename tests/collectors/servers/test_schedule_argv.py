"""`spectop sweep --tune`'s scheduled and k0 commands: the draft command with the engine's form of
the schedule applied, and with K = 0, as each release reads them. Each command is then parsed by
the simulated engine (collectors/simulator, which models vLLM 0.33.0's and SGLang 0.5.23's parsing
from their source), so the K it runs at each batch is checked end to end."""

from __future__ import annotations

import json
import shlex

import pytest

from collectors.errors import SpectopError
from collectors.servers import registry
from collectors.servers.schedule_argv import k0_argv, scheduled_argv
from collectors.simulator.sglang_schedule import sglang_policy
from collectors.simulator.vllm_schedule import vllm_policy
from collectors.tune.schedule import DraftSchedule, ScheduleLevel

VLLM_DRAFT = shlex.split(
    """vllm serve Qwen/Qwen2.5-7B-Instruct --port 8001 --speculative-config """
    """'{"method": "draft_model", "model": "Qwen/Qwen2.5-0.5B-Instruct", "num_speculative_tokens": 4}'"""
)
SGLANG_DRAFT = shlex.split(
    "python -m sglang.launch_server --model-path M --port 8001 --speculative-algorithm EAGLE "
    "--speculative-draft-model-path D --speculative-num-steps 3 --speculative-eagle-topk 4 "
    "--speculative-num-draft-tokens 8"
)


def schedule(backend: str) -> DraftSchedule:
    # note 25's: drafting 4 at 1 and 2, off from 4
    levels = tuple(
        ScheduleLevel(b, 4 if b < 4 else 0, "draft" if b < 4 else "plain", None, None, None)
        for b in (1, 2, 4, 8, 16)
    )
    return DraftSchedule(
        levels=levels, always_arm="draft", always_k=4, crossover=None, source="run", backend=backend
    )


def test_vllm_keeps_method_and_model_and_adds_the_ranges(tmp_path) -> None:
    form = registry.render_schedule("vllm", schedule("vllm"), "0.33.0")
    argv = scheduled_argv("vllm", VLLM_DRAFT, form, tmp_path)
    assert argv[:5] == VLLM_DRAFT[:5] and argv.count("--speculative-config") == 1
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["method"] == "draft_model" and config["model"] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert config["num_speculative_tokens_per_batch_size"] == [[1, 3, 4], [4, 16, 0]]
    # the engine (vllm/v1/spec_decode/dynamic/utils.py, as the simulator models it) runs K by batch
    policy = vllm_policy(argv, max_num_seqs=256)
    assert [policy.k_at(b) for b in (1, 3, 4, 16, 256)] == [4, 4, 0, 0, 0]


def test_vllm_k0_is_a_schedule_of_zeros_with_k_kept(tmp_path) -> None:
    argv = k0_argv("vllm", VLLM_DRAFT, tmp_path)
    assert argv is not None
    config = json.loads(argv[argv.index("--speculative-config") + 1])
    assert config["num_speculative_tokens"] == 4 and config["model"] == "Qwen/Qwen2.5-0.5B-Instruct"
    policy = vllm_policy(argv, max_num_seqs=256)
    assert {policy.k_at(b) for b in range(1, 257)} == {0}


def test_sglang_replaces_steps_topk_and_width_and_writes_the_config(tmp_path) -> None:
    form = registry.render_schedule("sglang", schedule("sglang"), "0.5.23")
    argv = scheduled_argv("sglang", SGLANG_DRAFT, form, tmp_path)
    assert "--speculative-num-draft-tokens" not in argv and argv.count("--speculative-num-steps") == 1
    assert argv[argv.index("--speculative-eagle-topk") + 1] == "1"
    path = argv[argv.index("--speculative-adaptive-config") + 1]
    assert path.startswith(str(tmp_path)) and json.loads(open(path).read()) == {
        "1": {"candidate_steps": [4]},
        "4": {"candidate_steps": [0]},
    }
    policy = sglang_policy(argv, default_steps=3)
    assert [policy.k_at(b) for b in (1, 3, 4, 16)] == [4, 4, 0, 0]
    k0 = k0_argv("sglang", SGLANG_DRAFT, tmp_path)
    assert k0 is not None and {sglang_policy(k0, default_steps=3).k_at(b) for b in (1, 4, 64)} == {0}


def test_engines_without_the_setting_say_so(tmp_path) -> None:
    assert k0_argv("llama.cpp", ["llama-server", "-m", "m.gguf"], tmp_path) is None
    form = registry.render_schedule("sglang", schedule("sglang"), None)
    with pytest.raises(SpectopError, match="no setting that drafts by batch"):
        scheduled_argv("llama.cpp", ["llama-server"], form, tmp_path)
