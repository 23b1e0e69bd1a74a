"""What a dashboard asks of the sweep: a run to start (`SweepRequest`) or a finished one to show (`SavedRun`).

The sweep dialog builds them; the dashboard's sweep worker hands a request to `run_request`, which
picks the engine: the multi-arm sweep when the request carries an arms plan (draft lengths, an
n-gram arm, prompt classes), the paired sweep otherwise. Both yield the same progress events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collectors.meters.sampler import Sampler
from collectors.sweep.arms import ArmSpec
from collectors.sweep.arms_plan import ArmsPlan
from collectors.sweep.arms_runner import run_arms_sweep
from collectors.sweep.events import SweepEvent
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep


@dataclass(frozen=True, slots=True)
class SweepRequest:
    """A sweep to run: a plan and the arms, plain first; `arms_plan` for a multi-arm sweep."""

    plan: SweepPlan
    arms: tuple[ArmSpec, ...]
    arms_plan: ArmsPlan | None = None


@dataclass(frozen=True, slots=True)
class SavedRun:
    """A finished run to show instead of a new one: its folder and its summary, read from its files."""

    run_dir: Path
    summary: dict[str, Any]


def run_request(
    request: SweepRequest,
    sampler: Sampler | None,
    results_root: Path,
    should_stop: Callable[[], bool],
    api_key: str | None,
) -> Iterator[SweepEvent]:
    """The request's progress events, from the multi-arm engine or the paired one."""
    if request.arms_plan:
        return run_arms_sweep(request.arms_plan, request.arms, sampler, results_root, should_stop, api_key)
    paired = (request.arms[0], request.arms[1])
    return run_sweep(request.plan, paired, sampler, results_root, should_stop, api_key)
