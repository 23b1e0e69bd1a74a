"""`--tune`: sweep (plain, draft) -> schedule -> start the scheduled (and K = 0) arm -> verify.

The paired sweep runs first; `derive_schedule` reads its results folder (collectors/tune); the
caller's `start_arms` starts a server with the schedule in its engine's own form, and one with
speculation configured and nothing drafted where the engine can express that; a multi-arm sweep
then measures plain, always-draft and those arms at the same batches, and the summary says batch
by batch whether the scheduled arm sits within the band of the lower envelope
(collectors/sweep/schedule_check.py). The run ends with one line: "verified: the schedule saves
X % against always-draft and Y % against plain over this load", or why it does not.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

from collectors.errors import SpectopError
from collectors.meters import Sampler
from collectors.sweep.arms import ArmSpec
from collectors.sweep.events import SweepEnded
from collectors.sweep.plan import ArmsPlan, SweepPlan
from collectors.sweep.records import ArmsSummary
from collectors.sweep.schedule_check import WALKING_LOAD, verify_over_load
from collectors.tune.derive import derive_schedule
from collectors.tune.schedule import DraftSchedule
from tui.commands import sweep as sweep_command

NOT_VERIFIED = 3  # as an untrusted sweep: it finished, but the schedule did not hold

StartArms = Callable[[DraftSchedule], tuple[ArmSpec, ...]]


def schedule_line(schedule: DraftSchedule) -> str:
    """The schedule as one line: the K at each measured batch."""
    levels = ", ".join(f"B={lv.batch}: {'off' if lv.k == 0 else f'K={lv.k}'}" for lv in schedule.levels)
    cross = schedule.crossover
    at = cross.batch_at_1 if cross else None
    where = f" (drafting starts costing energy at {at:.2f} requests)" if at is not None else ""
    return f"schedule: {levels}{where}"


def tune_and_verify(
    args: argparse.Namespace,
    plan: SweepPlan,
    pair: tuple[ArmSpec, ArmSpec],
    out,
    sampler: Sampler | None,
    start_arms: StartArms,
    *,
    draft_tokens: int | None = None,
    load: Mapping[int, float] = WALKING_LOAD,
) -> int:
    """The whole loop, printing as `spectop sweep` does; the exit code (3: not verified)."""
    ends: list[SweepEnded] = []
    code = sweep_command._sweep(args, plan, pair, out, sampler, ends)
    if code not in (0, NOT_VERIFIED) or not ends or ends[0].cancelled:
        return code
    try:
        schedule = derive_schedule(ends[0].run_dir, draft_tokens)
    except SpectopError as exc:
        return _said(out, f"not verified: no schedule to start: {exc}")
    _say(out, schedule_line(schedule))
    more = start_arms(schedule)
    arms = (pair[0], ArmSpec("draft", pair[1].url, pair[1].argv), *more)
    arms_plan = ArmsPlan(plan, tuple(a.name for a in arms[1:]), (plan.prompts,))
    ends = []
    code = sweep_command._sweep(args, arms_plan, arms, out, sampler, ends)
    if not ends or ends[0].cancelled or ends[0].error:
        return code
    summary = ends[0].summary
    if not isinstance(summary, ArmsSummary):
        return _said(out, "not verified: the verification sweep gave no multi-arm summary")
    result = verify_over_load(summary, load)
    return _said(out, result.line, 0 if result.verified else NOT_VERIFIED)


def _say(out, line: str) -> None:
    if out is not None:
        out.print(line, markup=False)
    else:
        print(line)


def _said(out, line: str, code: int = NOT_VERIFIED) -> int:
    _say(out, line)
    return code
