"""Each engine's form of a drafting schedule, checked against the release it is written for.

Schedules: note 25's (K 4 at 1 and 2 requests, off from 4) and the multi-arm run's (4 at 1, 2 at
2 and 4, off from 8), as tests/collectors/tune/test_derive.py derives them. Each engine's reading
of its form is modelled here from that release's source, cited by file and line, and run over
every batch 1..64: the engine must run the schedule's `k_at` there.
"""

from __future__ import annotations

import bisect
import json

import pytest

from collectors.errors import SpectopError
from collectors.servers import registry
from tests.support.tune_runs import ARMS_KS, NOTE25_KS, schedule_of

MAX_NUM_SEQS = 64


def vllm_dense(ranges: list[list[int]], num_speculative_tokens: int) -> list[int]:
    """vLLM 0.33.0 vllm/v1/spec_decode/dynamic/utils.py:77-139: validate (first range from 1,
    positive, sorted, not overlapping, K >= 0: lines 43-72), then fill batch -> K, a gap and the
    tail carrying the previous K, every K capped at num_speculative_tokens (lines 102-137)."""
    assert num_speculative_tokens > 0  # utils.py:93-94
    assert ranges[0][0] == 1
    previous_end = 0
    for first, last, k in ranges:
        assert 0 < first <= last and k >= 0 and first > previous_end
        previous_end = last
    dense = [0] * (MAX_NUM_SEQS + 1)
    for i, (first, last, k) in enumerate(ranges):
        upto = ranges[i + 1][0] - 1 if i + 1 < len(ranges) else MAX_NUM_SEQS
        for b in range(first, min(max(last, upto), MAX_NUM_SEQS) + 1):
            dense[b] = min(num_speculative_tokens, k)
    return dense


def sglang_steps(config: dict, batch: int) -> int:
    """SGLang 0.5.23 adaptive_spec_params.py:342-358 without CUDA graphs: the slot at or below the
    batch, the first below all; a one-candidate slot never moves (lines 213-251)."""
    keys = sorted(int(k) for k in config)
    slot = keys[max(0, bisect.bisect_right(keys, batch) - 1)]
    (steps,) = config[str(slot)]["candidate_steps"]
    return steps


@pytest.mark.parametrize(
    ("ks", "ranges", "top"),
    [(NOTE25_KS, [[1, 3, 4], [4, 16, 0]], 4), (ARMS_KS, [[1, 1, 4], [2, 7, 2], [8, 8, 0]], 4)],
)
def test_vllm_ranges_run_the_schedule_at_every_batch(ks, ranges, top):
    schedule = schedule_of(ks)
    form = registry.render_schedule("vllm", schedule, "0.33.0")
    assert form.flags[0] == "--speculative-config" and form.refused is None
    config = json.loads(form.flags[1])
    # equal K merged into one range; each ends where the next starts; the last at its level
    assert config == {"num_speculative_tokens": top, "num_speculative_tokens_per_batch_size": ranges}
    dense = vllm_dense(config["num_speculative_tokens_per_batch_size"], config["num_speculative_tokens"])
    assert dense[1:] == [schedule.k_at(b) for b in range(1, MAX_NUM_SEQS + 1)]
    assert form.k_by_batch == ks


def test_vllm_says_what_it_drops_the_schedule_for():
    form = registry.render_schedule("vllm", schedule_of(NOTE25_KS), "0.33.0")
    said = " ".join(form.cannot)
    assert "--data-parallel-size > 1" in said and "vllm/config/vllm.py:1110-1127" in said
    assert "draft_model" in said and "PIECEWISE" in said
    assert "may not check data parallelism" not in said  # 0.33.0 checks it
    assert any("K = 0" in note and "not plain" in note for note in form.notes)


def test_vllm_before_the_field_existed_is_refused_and_0_24_warned():
    old = registry.render_schedule("vllm", schedule_of(NOTE25_KS), "0.23.0")
    assert old.flags == () and "first appears in 0.24.0" in old.refused
    assert "above 3 concurrent requests" in old.refused  # drafting runs up to 3 (off from 4)
    first = registry.render_schedule("vllm", schedule_of(NOTE25_KS), "0.24.0")
    assert first.refused is None and any("data parallel size 1" in c for c in first.cannot)
    unknown = registry.render_schedule("vllm", schedule_of(NOTE25_KS), None)
    assert "0.33.0 (the sweep did not say which)" in unknown.notes[0]


@pytest.mark.parametrize(
    ("ks", "config", "steps"),
    [
        (NOTE25_KS, {"1": [4], "4": [0]}, "4"),
        (ARMS_KS, {"1": [4], "2": [2], "8": [0]}, "4"),
    ],
)
def test_sglang_one_candidate_slots_pin_the_schedule(ks, config, steps):
    schedule = schedule_of(ks)
    form = registry.render_schedule("sglang", schedule, "0.5.23")
    written = json.loads(form.files["sglang-adaptive.json"])
    assert written == {k: {"candidate_steps": v} for k, v in config.items()}
    assert [sglang_steps(written, b) for b in range(1, MAX_NUM_SEQS + 1)] == [
        schedule.k_at(b) for b in range(1, MAX_NUM_SEQS + 1)
    ]
    # --speculative-num-steps must be one of the candidates (speculative_hook.py:1415-1421)
    flags = list(form.flags)
    assert flags[flags.index("--speculative-num-steps") + 1] == steps
    assert flags[:3] == ["--speculative-adaptive", "--speculative-adaptive-config", "sglang-adaptive.json"]
    assert flags[flags.index("--speculative-eagle-topk") + 1] == "1"  # adaptive_spec_params.py:75-79


def test_sglang_says_how_close_it_gets():
    said = " ".join(registry.render_schedule("sglang", schedule_of(NOTE25_KS), None).cannot)
    assert "acceptance, not energy" in said
    assert "batch 3 where 4 is captured" in said  # 3 lies between the levels 2 and 4
    assert "EAGLE or EAGLE3" in said and "STANDALONE" in said


def test_llama_routes_at_the_batch_drafting_turns_off():
    form = registry.render_schedule("llama", schedule_of(NOTE25_KS), "b11434")
    assert form.flags == ("--route-by-batch", "4")
    assert form.apply_with == "spectop --proxy PORT --route-by-batch 4 --plain PLAIN_URL --draft DRAFT_URL"
    assert form.k_by_batch == NOTE25_KS
    assert any("--spec-draft-n-max 4" in n for n in form.notes)
    assert any("loaded twice" in n for n in form.notes)


def test_llama_says_what_one_drafting_server_cannot_do():
    # K 4 at 1 and 2 at 2-4: one server drafts the length most levels run, 2
    form = registry.render_schedule("llama", schedule_of(ARMS_KS), None)
    assert form.flags == ("--route-by-batch", "8")
    assert form.k_by_batch == {1: 2, 2: 2, 4: 2, 8: 0}
    assert any("K = [4] run at K = 2" in c for c in form.cannot)
    # off at 1, drafting at 2, off from 4: the router drafts every batch below 4
    off_first = registry.render_schedule("llama", schedule_of({1: 0, 2: 4, 4: 0}), None)
    assert any("drafting off below 4 is not routed" in c for c in off_first.cannot)
    never_off = registry.render_schedule("llama", schedule_of({1: 4, 2: 2}), None)
    assert never_off.flags == () and "nothing to route" in never_off.refused


def test_engine_names_and_an_unknown_engine():
    assert registry.engine("llama") is registry.engine("llama.cpp") is registry.find("llama.cpp")
    assert registry.engine("vLLM") is registry.find("vllm")
    with pytest.raises(SpectopError) as caught:
        registry.engine("tgi")
    assert "no engine called 'tgi'" in caught.value.what
    assert "llama" in caught.value.fix and "vllm" in caught.value.fix and "sglang" in caught.value.fix


@pytest.mark.parametrize(
    ("engine", "argv", "k"),
    [
        ("llama", ["llama-server", "-md", "d.gguf", "--spec-draft-n-max", "6"], 6),
        ("llama", ["llama-server", "--draft-max=3"], 3),  # an older build's flag
        ("llama", ["llama-server", "-md", "d.gguf"], None),  # the server's default: not said
        (
            "vllm",
            [
                "vllm",
                "serve",
                "m",
                "--speculative-config",
                '{"method": "eagle", "num_speculative_tokens": 5}',
            ],
            5,
        ),
        ("vllm", ["vllm", "serve", "m", "--num-speculative-tokens", "2"], 2),  # before 0.7
        ("sglang", ["python", "-m", "sglang.launch_server", "--speculative-num-steps=3"], 3),
    ],
)
def test_a_draft_length_read_from_a_command(engine, argv, k):
    assert registry.engine(engine).draft_tokens_in(argv) == k
