"""One engine step's cost: how long its committed tokens take and which curves its chip load
follows; and the `DraftPolicy` that picks a scheduled engine's draft length per step."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from collectors.simulator.accelerator import Accelerator, CurveKey
from collectors.simulator.tasks import Task

# (task, drafted, accepted, committed tokens) of each request in one engine step
Plan = list[tuple[Task, int, int, int]]


class DraftPolicy(Protocol):
    """How many tokens an engine drafts at each step: its server's schedule (vLLM's draft length
    by batch, SGLang's adaptive steps). K = 0 is speculation configured with nothing drafted."""

    def k_at(self, batch: int) -> int:
        """The draft length of a step of `batch` requests."""
        ...

    def on_verify(self, accepted_per_request: Sequence[int], batch: int) -> None:
        """A verify step of `batch` requests accepted these drafts (an adaptive policy learns)."""


def load_of(tasks: Sequence[Task], curve_kind: str) -> dict[CurveKey, int]:
    """The chip load of a step: its requests by (curves, prompt class)."""
    load: dict[CurveKey, int] = {}
    for task in tasks:
        key = (curve_kind, task.prompt_class.name)
        load[key] = load.get(key, 0) + 1
    return load


def step_seconds(
    plan: Plan, n_total: int, curve_kind: str, accel: Accelerator, rng: random.Random, noise: float
) -> float:
    """Time the step's committed tokens take at each request's share of the calibrated rate (a
    K = 0 step's stretched by its overhead), with a small seeded jitter."""
    total = 0.0
    stretch = 1.0 + accel.k0_overhead.fraction(n_total) if curve_kind == "k0" else 1.0
    for task, _, _, committed in plan:
        curves = task.prompt_class.curves(curve_kind)
        per_request_tok_s = curves.tok_s.at(n_total) * accel.speedup / n_total / stretch
        total += committed / per_request_tok_s
    jitter = 1.0 + max(-3.0, min(3.0, rng.gauss(0.0, 1.0))) * noise
    return total / len(plan) * jitter
