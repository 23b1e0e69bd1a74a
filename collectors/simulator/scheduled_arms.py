"""The drafting of a simulated server started with its engine's own schedule flags.

vLLM: `--speculative-config JSON` with `num_speculative_tokens_per_batch_size` (vllm_schedule.py);
"configured, K = 0" is a schedule of zeros. SGLang: `--speculative-adaptive` with
`--speculative-adaptive-config FILE` (sglang_schedule.py); K = 0 is a config whose only candidate
is 0. llama-server has no such setting (a request cannot turn drafting off either), so it has no
scheduled arm: two servers and a router stand in for one there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from collectors.simulator.profiles import Profile
from collectors.simulator.sglang_schedule import SglangAdaptiveK, sglang_policy
from collectors.simulator.vllm_schedule import VllmDynamicK, vllm_policy

ArmPolicy = VllmDynamicK | SglangAdaptiveK


def arm_policy(
    backend: str, flags: Sequence[str], profile: Profile, max_num_seqs: int, dp: int = 1
) -> ArmPolicy:
    """The policy of an arm of `backend` started with `flags`; ValueError where it refuses them."""
    if backend == "vllm":
        return vllm_policy(flags, max_num_seqs=max_num_seqs, dp_size=dp)
    if backend == "sglang":
        return sglang_policy(flags, default_steps=profile.draft.n_max)
    raise ValueError(
        f"{backend} has no setting that drafts by batch: a scheduled arm needs a vLLM or SGLang "
        "backend (on llama-server, route requests between a plain and a drafting server)"
    )


def k0_flags(backend: str, n_max: int, max_num_seqs: int, directory: Path) -> list[str]:
    """The flags of a server with speculation configured and nothing drafted (K = 0 at every batch):
    vLLM a schedule of zeros; SGLang an adaptive config whose only candidate is 0 (written into
    `directory`, as SGLang reads it from a file)."""
    if backend == "vllm":
        config = {
            "method": "draft_model",
            "num_speculative_tokens": n_max,
            "num_speculative_tokens_per_batch_size": [[1, max_num_seqs, 0]],
        }
        return ["--speculative-config", json.dumps(config)]
    if backend == "sglang":
        path = directory / "k0-adaptive.json"
        path.write_text(json.dumps({"1": {"candidate_steps": [0]}}) + "\n")
        return [
            "--speculative-adaptive",
            "--speculative-adaptive-config",
            str(path),
            "--speculative-num-steps",
            "0",
        ]
    raise ValueError(f"{backend} cannot draft nothing with speculation configured (no K = 0 setting)")
