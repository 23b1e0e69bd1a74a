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
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from collectors.errors import SpectopError
from collectors.launch.process import url_from_argv
from collectors.meters import Sampler, sampling
from collectors.servers import registry
from collectors.servers.schedule_argv import k0_argv, scheduled_argv
from collectors.sweep.arms import ArmSpec, make_arms
from collectors.sweep.events import SweepEnded
from collectors.sweep.plan import ArmsPlan, SweepPlan
from collectors.sweep.records import ArmsSummary
from collectors.sweep.schedule_check import WALKING_LOAD, verify_over_load
from collectors.tune.derive import derive_schedule
from collectors.tune.profile import load_profile
from collectors.tune.schedule import DraftSchedule
from tui.commands import _common as opts

WALK = "the demo's walk: equal time at 1, 2, 4, 8, 16, 8, 4, 2 concurrent requests"
NOT_VERIFIED = 3  # as an untrusted sweep: it finished, but the schedule did not hold

StartArms = Callable[[DraftSchedule], tuple[ArmSpec, ...]]
# `spectop sweep`'s one sweep, printed as it prints it (sweep._sweep): the exit code; its end appended
RunOne = Callable[..., int]


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
    run_one: RunOne,
    *,
    draft_tokens: int | None = None,
    load: Mapping[int, float] = WALKING_LOAD,
    by_tokens: bool = False,
) -> int:
    """The whole loop, printing as `spectop sweep` does; the exit code (3: not verified)."""
    ends: list[SweepEnded] = []
    code = run_one(args, plan, pair, out, sampler, ends)
    if code not in (0, NOT_VERIFIED) or not ends or ends[0].cancelled:
        return code
    try:
        schedule = derive_schedule(ends[0].run_dir, draft_tokens)
    except SpectopError as exc:
        return _said(out, f"not verified: no schedule to start: {exc}")
    _say(out, schedule_line(schedule))
    try:
        more = start_arms(schedule)
    except SpectopError as exc:
        return _said(out, f"not verified: the schedule cannot be started: {exc}")
    arms = (pair[0], ArmSpec("draft", pair[1].url, pair[1].argv), *more)
    arms_plan = ArmsPlan(plan, tuple(a.name for a in arms[1:]), (plan.prompts,))
    ends = []
    code = run_one(args, arms_plan, arms, out, sampler, ends)
    if not ends or ends[0].cancelled or ends[0].error:
        return code
    summary = ends[0].summary
    if not isinstance(summary, ArmsSummary):
        return _said(out, "not verified: the verification sweep gave no multi-arm summary")
    result = verify_over_load(summary, load, by_tokens=by_tokens)
    return _said(out, result.line, 0 if result.verified else NOT_VERIFIED)


def _say(out, line: str) -> None:
    if out is not None:
        out.print(line, markup=False)
    else:
        print(line)


def _said(out, line: str, code: int = NOT_VERIFIED) -> int:
    _say(out, line)
    return code


def run(
    args: argparse.Namespace, build_plan: Callable[[argparse.Namespace], SweepPlan], run_one: RunOne
) -> int:
    """`spectop sweep --tune` with a launched draft command (its scheduled and k0 arms are that
    command with the schedule's flags, run one at a time as every launched arm is)."""
    if args.arm or args.draft_max or args.ngram or args.json or not args.draft_cmd:
        raise SpectopError(
            "--tune starts the scheduled server from the draft command of a paired sweep",
            "give --draft-cmd '...' with --plain URL, --plain-cmd or neither (derived); "
            "not --arm, --draft-max, --ngram or --json",
        )
    plan = build_plan(args)
    pair = make_arms(args.plain, args.draft, args.plain_cmd, args.draft_cmd)
    out = opts.console()

    def start_arms(schedule: DraftSchedule) -> tuple[ArmSpec, ...]:
        folder, draft = Path(schedule.source), pair[1]
        form = registry.render_schedule(schedule.backend or "", schedule, schedule.build)
        argv = scheduled_argv(schedule.backend, draft.argv, form, folder)
        arms = [ArmSpec("scheduled", url_from_argv(argv), tuple(argv))]
        k0 = k0_argv(schedule.backend, draft.argv, folder)
        if k0 is not None:
            arms.append(ArmSpec("k0", url_from_argv(k0), tuple(k0)))
        for arm in arms:
            out.print(f"{arm.name} arm: {shlex.join(arm.argv)}", markup=False)
        return tuple(arms)

    profile = load_profile(args.load) if args.load else None
    out.print(f"load: {profile.source if profile else WALK}", markup=False)
    with sampling(args.meter) as sampler:
        if profile is None:
            return tune_and_verify(args, plan, pair, out, sampler, start_arms, run_one)
        return tune_and_verify(
            args, plan, pair, out, sampler, start_arms, run_one, load=profile.token_share, by_tokens=True
        )
