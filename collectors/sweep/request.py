"""What a dashboard asks of the sweep: a run to start (`SweepRequest`) or a finished one to show (`SavedRun`).

The sweep dialog builds them; the dashboard's sweep worker hands a request to `run_request`, which
runs it: with the request's arms plan (draft lengths, an n-gram arm, prompt classes), or the
paired plan (plain and draft, one class) otherwise, on the one sweep engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from collectors.meters.sampler import Sampler
from collectors.sweep.arms import ArmSpec
from collectors.sweep.events import SweepEvent
from collectors.sweep.plan import ArmsPlan, SweepPlan
from collectors.sweep.records import Summary


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
    summary: Summary


def run_request(
    request: SweepRequest,
    sampler: Sampler | None,
    results_root: Path,
    should_stop: Callable[[], bool],
    api_key: str | None,
) -> Iterator[SweepEvent]:
    """The request's progress events: its arms plan when it has one, else the paired plan on its
    first two arms (plain and draft); one engine runs either."""
    # the engine loads when a sweep starts: a dashboard's first frame does not wait for it
    from collectors.sweep.runner import run_sweep

    plan = request.arms_plan or request.plan
    arms = request.arms if request.arms_plan else request.arms[:2]
    return run_sweep(plan, arms, sampler, results_root, should_stop, api_key)
