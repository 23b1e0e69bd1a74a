"""The simulated servers parse and apply each engine's drafting schedule as the release does.

vLLM 0.33.0: `num_speculative_tokens_per_batch_size` validated and expanded by
vllm/v1/spec_decode/dynamic/utils.py (validate :7-73, dense lookup :76-142), looked up by the
step's request count (vllm/v1/core/sched/scheduler.py:1709-1714), refused under data parallelism
(vllm/config/vllm.py:1110-1127). SGLang 0.5.23: `--speculative-adaptive` slots and EMA from
sglang/srt/speculative/adaptive_spec_params.py (config :103-139, slot :153-272, routing :342-358).
Every expected value below is worked out by hand from those lines.
"""

from __future__ import annotations

import json

import pytest

from collectors.simulator.profiles import NOTE25
from collectors.simulator.scheduled_arms import arm_policy
from collectors.simulator.sglang_schedule import DEFAULT_ADAPTIVE_CONFIG, StepSlot, sglang_policy
from collectors.simulator.vllm_schedule import dense_lookup, validate_schedule, vllm_policy


def sc(schedule: object, k: int = 4, method: str = "draft_model") -> list[str]:
    body = {"method": method, "num_speculative_tokens": k, "num_speculative_tokens_per_batch_size": schedule}
    return ["--speculative-config", json.dumps(body)]


# -- vLLM ------------------------------------------------------------------------------------------


def test_vllm_dense_lookup_carries_a_gap_and_the_tail_and_caps_at_k() -> None:
    # utils.py:104-107: [(1, 16, 3), (32, 128, 2)] maps 17-31 to K=3; :131-139: the tail after 128
    # carries 2; every K is min(num_speculative_tokens, K) (:113-116), so with k=2 the 3s become 2
    dense = dense_lookup([[1, 16, 3], [32, 128, 2]], 200, 5)
    assert dense[0] == 0 and dense[1] == dense[16] == 3 and dense[17] == dense[31] == 3
    assert dense[32] == dense[128] == dense[129] == dense[200] == 2
    assert set(dense_lookup([[1, 16, 3], [32, 128, 2]], 40, 2)[1:]) == {2}
    # a schedule longer than max_num_seqs stops at it (:121-122)
    assert dense_lookup([[1, 3, 4], [4, 1024, 0]], 16, 4) == [0, 4, 4, 4] + [0] * 13


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ([[2, 16, 4]], "must start at 1"),  # utils.py:66-71
        ([[1, 8, 4], [8, 16, 0]], "non-overlapping"),  # :60-64
        ([[1, 8, -1]], ">= 0"),  # :52-55
        ([[1, 8]], "3-item sequence"),  # :31-35
        ([[4, 1, 2]], "start must be <= end"),  # :46-50
        ([], "must not be empty"),  # :26-27
        ({"1": 4}, "non-empty list"),  # :21-25
    ],
)
def test_vllm_refuses_a_malformed_schedule_with_its_own_message(schedule: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_schedule(schedule)
    with pytest.raises(ValueError, match=message):  # and a simulated vLLM will not start with it
        vllm_policy(sc(schedule), max_num_seqs=16)


def test_vllm_looks_k_up_by_the_steps_request_count_and_reports_the_config_back() -> None:
    policy = vllm_policy(sc([[3, 3, 2], [1, 2, 4], [4, 64, 0]]), max_num_seqs=16)  # sorted (:57)
    assert [policy.k_at(b) for b in (1, 2, 3, 4, 16)] == [4, 4, 2, 0, 0]
    assert policy.config["num_speculative_tokens_per_batch_size"] == [[1, 2, 4], [3, 3, 2], [4, 64, 0]]
    assert policy.warnings == []


def test_vllm_refuses_the_schedule_under_data_parallel_and_falls_back_to_static_k() -> None:
    # config/vllm.py:1110-1127: a warning, the schedule set to None, static num_speculative_tokens
    policy = vllm_policy(sc([[1, 3, 4], [4, 64, 0]], k=3), max_num_seqs=8, dp_size=2)
    assert [policy.k_at(b) for b in (1, 8)] == [3, 3]
    assert policy.config["num_speculative_tokens_per_batch_size"] is None
    assert "not supported with data parallelism" in policy.warnings[0] and "=3." in policy.warnings[0]


def test_vllm_v1_refuses_a_method_without_dynamic_support() -> None:
    # config/vllm.py:1088-1108: only ngram, eagle, eagle3, mtp, draft_model and dflash on V1
    policy = vllm_policy(sc([[1, 64, 0]], method="suffix"), max_num_seqs=8)
    assert policy.k_at(8) == 4 and "'suffix'" in policy.warnings[0]


def test_vllm_k_must_be_positive_so_k0_is_a_schedule_of_zeros() -> None:
    with pytest.raises(ValueError, match="> 0"):  # config/speculative.py:413: Field(gt=0)
        vllm_policy(sc(None, k=0), max_num_seqs=8)
    assert {vllm_policy(sc([[1, 256, 0]]), max_num_seqs=16).k_at(b) for b in range(1, 17)} == {0}


# -- SGLang ----------------------------------------------------------------------------------------


def write(tmp_path, cfg: object) -> str:
    path = tmp_path / "adaptive.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_sglang_routes_each_batch_to_the_largest_slot_at_or_below_it(tmp_path) -> None:
    cfg = {"1": {"candidate_steps": [4]}, "4": {"candidate_steps": [0]}, "note": "ignored"}
    argv = ["--speculative-adaptive", "--speculative-adaptive-config", write(tmp_path, cfg)]
    policy = sglang_policy(argv, default_steps=4)
    # candidates {0, 4}: no --speculative-num-steps, so the middle one, 4 (speculative_hook.py:1412-1418);
    # slot 1 has 4, slot 4 starts on its own middle, 0 (adaptive_spec_params.py:177-180)
    assert [policy.k_at(b) for b in (1, 2, 3, 4, 16)] == [4, 4, 4, 0, 0]
    for _ in range(40):  # single candidates never move, whatever is accepted
        policy.on_verify([0, 0, 0, 0], 4)
        policy.on_verify([4], 1)
    assert [policy.k_at(b) for b in (1, 4)] == [4, 0]


def test_sglang_default_config_and_the_ema_moving_the_steps_down() -> None:
    policy = sglang_policy(["--speculative-adaptive", "--speculative-num-steps", "3"], default_steps=4)
    # DEFAULT_ADAPTIVE_CONFIG (:28-53): slots 1, 8, 32, 64; 3 is a candidate of 1 and 8; slot 32
    # ([0, 1]) starts on its middle, index 2 // 2 = 1, and slot 64 on its only one, 0 (:177-180)
    assert [policy.k_at(b) for b in (1, 7, 8, 31, 32, 64, 500)] == [3, 3, 3, 3, 1, 0, 0]
    slot = StepSlot(3, {**DEFAULT_ADAPTIVE_CONFIG["1"]})
    # EMA starts at steps - 1 = 2 (:183); alpha 0.2 towards 0 accepted: 2 x 0.8^n. After 10 warm-up
    # batches and 5 more (:199-204) it is 2 x 0.8^15 = 0.070, at or below 1 - 0.5 - 0.25 = 0.25
    # (the next lower candidate, 1, with down_hysteresis -0.25), so 3 -> 1; not below 0: 1 is the floor
    for n in range(14):
        slot.update([0, 0])
        assert slot.steps == 3, n
    slot.update([0, 0])
    assert slot.steps == 1 and slot.ema == pytest.approx(2 * 0.8**15)


def test_sglang_refuses_adaptive_for_topk_above_one_and_a_step_outside_the_candidates(tmp_path) -> None:
    # adaptive_spec_params.py:74-78 -> speculative_hook.py:1376-1389: warn, static steps
    policy = sglang_policy(["--speculative-adaptive", "--speculative-eagle-topk", "4"], default_steps=4)
    assert policy.k_at(64) == 4 and "only topk=1" in policy.warnings[0]
    with pytest.raises(ValueError, match="not in the adaptive config candidate_steps"):  # :1420-1425
        sglang_policy(["--speculative-adaptive", "--speculative-num-steps", "2"], default_steps=4)
    with pytest.raises(ValueError, match="non-negative ints"):  # :121-130
        sglang_policy(
            [
                "--speculative-adaptive",
                "--speculative-adaptive-config",
                write(tmp_path, {"1": {"candidate_steps": [-1]}}),
            ],
            default_steps=4,
        )


def test_llama_server_has_no_scheduled_arm() -> None:
    with pytest.raises(ValueError, match="no setting that drafts by batch"):
        arm_policy("llama-server", ["--spec-draft-n-max", "0"], NOTE25, 16)
