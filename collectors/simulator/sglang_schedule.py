"""A simulated SGLang 0.5.23 started with `--speculative-adaptive [--speculative-adaptive-config FILE]`.

Modelled as sglang/srt/speculative/adaptive_spec_params.py does it:
- the config is a JSON object whose integer-string keys are batch sizes, each with its own
  `candidate_steps` (non-negative ints) and tuning knobs; the other keys are defaults for every
  slot (`_load_adaptive_config`, :103-139); without a file, `DEFAULT_ADAPTIVE_CONFIG` (:28-53);
- a step of B requests uses the slot of the largest key <= B (the first slot below it;
  `_find_closest_bs`, :356-358), on its current number of draft steps (`get_steps_for_batch`);
- after each verify the slot's EMA of accepted drafts per request moves (alpha 0.2), and after
  10 warm-up batches, every 5th, the steps move one candidate down when the EMA is at or below
  the next lower step - 0.5 (+ down_hysteresis; 0.5 for a floor of 0) and up when it is above the
  current step - 0.5 (+ up_hysteresis); a slot on 0 probes the next candidate (`update`,
  `_recompute_params`, :187-261);
- the server's `--speculative-num-steps` (default: the middle of all candidates,
  arg_groups/speculative_hook.py:1412-1418; refused when not a candidate, :1420-1425) starts each
  slot that has it, the others start on their own middle candidate (:166-185);
- refused with a warning, falling back to static steps, when topk is not 1 or attention DP is on
  (`adaptive_unsupported_reason`, :56-100; speculative_hook.py:1376-1389).
The simulated server runs without CUDA graphs, so a batch is not padded to a captured size (:348-354).
With topk 1 a step of S draft steps verifies S + 1 tokens; K is S.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_ADAPTIVE_CONFIG: dict[str, dict[str, Any]] = {  # adaptive_spec_params.py:28-53
    "1": {
        "candidate_steps": [1, 3, 5, 7],
        "up_hysteresis": 0.0,
        "down_hysteresis": -0.25,
        "ceiling_coeff": 0,
    },
    "8": {"candidate_steps": [0, 1, 3], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
    "32": {"candidate_steps": [0, 1], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
    "64": {"candidate_steps": [0], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
}


def slot_entries(cfg: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """The batch-size slots of a config, checked as `_load_adaptive_config` checks them."""
    entries: dict[int, dict[str, Any]] = {}
    for key, entry in cfg.items():
        if not key.isdigit():
            continue
        steps = entry.get("candidate_steps") if isinstance(entry, dict) else None
        if not isinstance(steps, list) or not steps or not all(isinstance(s, int) and s >= 0 for s in steps):
            raise ValueError(f"BS {key}: candidate_steps must be a list of non-negative ints, got {steps!r}")
        entries[int(key)] = {**cfg, **entry}
    if not entries:
        raise ValueError(
            "speculative_adaptive_config must contain at least one integer-string "
            f'BS key, e.g. {{"1": {{"candidate_steps": [1,3,7]}}}}. Got keys: {list(cfg.keys())}'
        )
    return entries


class StepSlot:
    """`AdaptiveStepSlot`: one batch-size slot's steps and its EMA of accepted drafts."""

    def __init__(self, initial_steps: int, cfg: Mapping[str, Any]) -> None:
        self.candidates = sorted(set(cfg["candidate_steps"]))
        self.ema_alpha = cfg.get("ema_alpha", 0.2)
        self.update_interval = cfg.get("update_interval", 5)
        self.warmup_batches = cfg.get("warmup_batches", 10)
        self.down_hysteresis = cfg.get("down_hysteresis", -0.25)
        self.up_hysteresis = cfg.get("up_hysteresis", 0.0)
        self.ceiling_coeff = cfg.get("ceiling_coeff", 0)
        mid = self.candidates[len(self.candidates) // 2]
        self.steps = initial_steps if initial_steps in self.candidates else mid
        self.ema = float(self.steps - 1)
        self._batches = 0

    def update(self, accepted_per_request: Sequence[int]) -> None:
        if not accepted_per_request:
            return
        if self.steps > 0:
            mean = sum(accepted_per_request) / len(accepted_per_request)
            self.ema = (1 - self.ema_alpha) * self.ema + self.ema_alpha * mean
        self._batches += 1
        if (
            self._batches > self.warmup_batches
            and (self._batches - self.warmup_batches) % self.update_interval == 0
        ):
            self._recompute()

    def _recompute(self) -> None:
        c, idx = self.candidates, self.candidates.index(self.steps)
        if self.steps == 0:  # probe the smallest positive step after a no-drafting interval
            idx = min(idx + 1, len(c) - 1)
            if c[idx] > 0 and self.ema < 0:
                self.ema = float(c[idx] - 1)
            self.steps = c[idx]
            return
        old = idx
        while idx > 0:
            floor = 0.5 if c[idx - 1] == 0 else c[idx - 1] - 0.5
            if self.ema <= floor + self.down_hysteresis:
                idx -= 1
            else:
                break
        if idx == old:
            while idx < len(c) - 1 and self.ema > c[idx] - 0.5 + self.up_hysteresis:
                idx += 1
        target = c[idx]
        if self.ceiling_coeff > 0:
            ceiling = max(1, math.ceil(self.ema * self.ceiling_coeff))
            if ceiling < target <= self.steps:
                while idx > 0 and c[idx] > ceiling:
                    idx -= 1
                target = c[idx]
        self.steps = target


@dataclass
class SglangAdaptiveK:
    """The draft steps a simulated SGLang runs at each step (static when not adaptive)."""

    config: dict[str, Any] | None  # the adaptive config in effect; None: static
    static_steps: int  # --speculative-num-steps, as the server reports it
    config_path: str | None = None
    slots: dict[int, StepSlot] = field(default_factory=dict)  # by batch size; none: static
    warnings: list[str] = field(default_factory=list)

    def _slot(self, batch: int) -> StepSlot:
        below = [bs for bs in self.slots if bs <= batch]
        return self.slots[max(below) if below else min(self.slots)]

    def k_at(self, batch: int) -> int:
        return self._slot(batch).steps if self.slots else self.static_steps

    def on_verify(self, accepted_per_request: Sequence[int], batch: int) -> None:
        if self.slots:
            self._slot(batch).update(accepted_per_request)


def _flag(argv: Sequence[str], name: str) -> str | None:
    for i, token in enumerate(argv):
        key, eq, value = token.partition("=")
        if key == name:
            return value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
    return None


def sglang_policy(argv: Sequence[str], *, default_steps: int) -> SglangAdaptiveK:
    """The drafting of an SGLang EAGLE server started with `argv` (topk 1 unless given)."""
    steps_flag = _flag(argv, "--speculative-num-steps")
    steps = int(steps_flag) if steps_flag else None
    if "--speculative-adaptive" not in argv:
        return SglangAdaptiveK(None, steps if steps is not None else default_steps)
    topk = _flag(argv, "--speculative-eagle-topk")
    reason = None
    if topk not in (None, "1"):
        reason = f"speculative_eagle_topk={topk} (only topk=1 is supported)"
    elif "--enable-dp-attention" in argv:
        reason = (
            "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)"
        )
    if reason:
        warning = f"speculative_adaptive disabled: {reason}. Falling back to static speculative params."
        return SglangAdaptiveK(None, steps if steps is not None else default_steps, warnings=[warning])
    path = _flag(argv, "--speculative-adaptive-config")
    cfg = json.loads(Path(path).read_text()) if path else DEFAULT_ADAPTIVE_CONFIG
    if not isinstance(cfg, dict):
        raise ValueError("speculative_adaptive_config must be a JSON object")
    entries = slot_entries(cfg)
    candidates = sorted({s for e in entries.values() for s in e["candidate_steps"]})
    initial = candidates[len(candidates) // 2] if steps is None else steps
    if initial not in candidates:
        raise ValueError(
            f"--speculative-num-steps={initial} is not in the adaptive config candidate_steps "
            f"{candidates}. Pass one of those values."
        )
    slots = {bs: StepSlot(initial, entry) for bs, entry in sorted(entries.items())}
    return SglangAdaptiveK(cfg, initial, path, slots)
