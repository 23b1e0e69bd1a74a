"""A simulated vLLM 0.33 started with `--speculative-config JSON`: its draft length by batch.

`num_speculative_tokens_per_batch_size` is parsed, validated and expanded exactly as vLLM 0.33 does
(vllm/v1/spec_decode/dynamic/utils.py:7-73 validates, :76-142 builds the dense 1-indexed lookup up
to `max_num_seqs`, each K capped at `num_speculative_tokens`), and each step looks the K up by the
number of requests it schedules (vllm/v1/core/sched/scheduler.py:1709-1714). The refusals warn and
fall back to the static `num_speculative_tokens`, as vllm/config/vllm.py does: under data
parallelism > 1 (:1110-1127) and, on the V1 model runner, for a method without dynamic support
(:1088-1108). `num_speculative_tokens` must be > 0 (vllm/config/speculative.py:413), so "configured,
K = 0" is a schedule of zeros, e.g. `[[1, 256, 0]]`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DYNAMIC_METHODS = ("ngram", "eagle", "eagle3", "mtp", "draft_model", "dflash")  # config/vllm.py:1096
CONFIG_FLAGS = ("--speculative-config", "-sc")


def validate_schedule(entries: object) -> list[tuple[int, int, int]]:
    """vLLM's `validate_and_normalize_dynamic_sd_schedule`, with its messages."""
    if entries is None:
        raise ValueError(
            "num_speculative_tokens_per_batch_size is required for dynamic speculative decoding."
        )
    if not isinstance(entries, list):
        raise ValueError(
            "num_speculative_tokens_per_batch_size must be a non-empty list of "
            "(range_start, range_end, num_speculative_tokens) entries."
        )
    if not entries:
        raise ValueError("num_speculative_tokens_per_batch_size must not be empty.")
    parsed: list[tuple[int, int, int]] = []
    for entry in entries:
        if not isinstance(entry, list | tuple) or len(entry) != 3:
            raise ValueError(
                "Each num_speculative_tokens_per_batch_size entry must be a "
                "3-item sequence: (range_start, range_end, num_speculative_tokens)."
            )
        start, end, k = int(entry[0]), int(entry[1]), int(entry[2])
        if start <= 0 or end <= 0:
            raise ValueError(f"Batch-size range ({start}, {end}) must be positive.")
        if start > end:
            raise ValueError(f"Batch-size range start must be <= end for ({start}, {end}, {k}).")
        if k < 0:
            raise ValueError("num_speculative_tokens_per_batch_size values must be >= 0.")
        parsed.append((start, end, k))
    parsed.sort(key=lambda e: e[0])
    previous_end = 0
    for start, end, _ in parsed:
        if start <= previous_end:
            raise ValueError("Batch-size ranges must be non-overlapping and sorted.")
        previous_end = end
    if parsed[0][0] != 1:
        raise ValueError(
            "The first batch-size range must start at 1 so every runtime batch size has a defined schedule."
        )
    return parsed


def dense_lookup(entries: object, max_batch: int, num_speculative_tokens: int) -> list[int]:
    """vLLM's `build_dynamic_sd_schedule_lookup`: index B holds the K for B requests (0 unused);
    a gap between ranges carries the previous K forward, and so does the tail."""
    if max_batch <= 0:
        raise ValueError("vllm_max_batch_size must be > 0.")
    if num_speculative_tokens <= 0:
        raise ValueError("vllm_num_speculative_tokens must be > 0.")
    dense = [0] * (max_batch + 1)
    next_batch = 1
    last_k: int | None = None
    for start, end, k in validate_schedule(entries):
        if start > next_batch and last_k is not None:
            for b in range(next_batch, min(start, max_batch + 1)):
                dense[b] = min(num_speculative_tokens, last_k)
        for b in range(max(start, next_batch), min(end, max_batch) + 1):
            dense[b] = min(num_speculative_tokens, k)
        next_batch = max(next_batch, end + 1)
        last_k = k
        if next_batch > max_batch:
            break
    assert last_k is not None  # validate_schedule refuses an empty list
    for b in range(next_batch, max_batch + 1):
        dense[b] = min(num_speculative_tokens, last_k)
    return dense


@dataclass
class VllmDynamicK:
    """The K a simulated vLLM drafts at each step, from its speculative config."""

    config: dict[str, Any]  # as the server reports it back (the schedule None after a refusal)
    num_speculative_tokens: int
    lookup: list[int] | None  # None: static K
    warnings: list[str] = field(default_factory=list)

    def k_at(self, batch: int) -> int:
        if self.lookup is None or batch <= 0:
            return self.num_speculative_tokens
        return self.lookup[min(batch, len(self.lookup) - 1)]

    def on_verify(self, accepted_per_request: Sequence[int], batch: int) -> None:
        """vLLM's schedule is fixed by batch: what was accepted changes nothing."""


def config_from_flags(argv: Sequence[str]) -> dict[str, Any]:
    """The JSON of `--speculative-config`/`-sc` (either `--flag JSON` or `--flag=JSON`)."""
    for i, token in enumerate(argv):
        name, eq, value = token.partition("=")
        if name in CONFIG_FLAGS:
            text = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            try:
                config = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"--speculative-config is not JSON ({exc.msg}): {text[:60]!r}") from None
            if not isinstance(config, dict):
                raise ValueError("--speculative-config must be a JSON object")
            return config
    raise ValueError("a vLLM scheduled arm needs --speculative-config JSON")


def vllm_policy(
    argv: Sequence[str], *, max_num_seqs: int, dp_size: int = 1, v2_runner: bool = False
) -> VllmDynamicK:
    """The drafting of a vLLM started with `argv`; a refused schedule warns as vLLM does."""
    config = dict(config_from_flags(argv))
    k = config.get("num_speculative_tokens")
    if not isinstance(k, int) or k <= 0:
        raise ValueError(f"num_speculative_tokens must be an integer > 0, not {k!r}")
    schedule = config.get("num_speculative_tokens_per_batch_size")
    if schedule is None:
        return VllmDynamicK(config, k, None)
    warnings = []
    if dp_size > 1:
        warnings.append(
            "Dynamic speculative decoding is not supported with data parallelism because data-parallel "
            "ranks can select different speculative-token counts, causing DP divergence and deadlocks. "
            f"Disabling num_speculative_tokens_per_batch_size and falling back to static "
            f"num_speculative_tokens={k}."
        )
    elif not v2_runner and config.get("method", "draft_model") not in DYNAMIC_METHODS:
        warnings.append(
            f"Dynamic speculative decoding is not supported with the '{config.get('method')}' "
            "speculative method on Model Runner V1. Disabling num_speculative_tokens_per_batch_size "
            f"and falling back to static num_speculative_tokens={k}."
        )
    if warnings:
        config["num_speculative_tokens_per_batch_size"] = None
        return VllmDynamicK(config, k, None, warnings)
    lookup = dense_lookup(schedule, max_num_seqs, k)
    config["num_speculative_tokens_per_batch_size"] = [list(e) for e in validate_schedule(schedule)]
    return VllmDynamicK(config, k, lookup)
