"""The sweep as a generator of progress events with a stop callback (shared by TUI and CLI): the
paired sweep (plain against draft over batches, as note 25 did) and the multi-arm sweep (seed 001's
question: which drafting, for which traffic) are one engine, the paired sweep being the one with
the arm "draft" and one prompt class (plan.ArmsPlan); the protocol is collectors/docs/sweep.md's.

Each point is measured the same way: the arm's server ready (one launched server at a time, so arms
that share a device never run together), a warm-up, B concurrent requests of its class's prompts at
temperature 0 and a fixed length, the server's counters around the window (session.py, points.py).
Pitfalls handled: whatever ends a sweep early (a point that failed twice, a bad answer, a bug), the
points measured get their summary and the error is told, never raised; in a multi-arm sweep a
drafting arm that fails (its server crashes, twice) is recorded with its log tail and its points
skipped, the other arms' kept; the paired sweep refines around its crossover after the grid.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import httpx

from collectors.errors import SpectopError
from collectors.http import describe
from collectors.meters.sampler import Sampler
from collectors.redact import scrub, secrets_in
from collectors.sweep.arms import ArmSpec
from collectors.sweep.events import (
    IdleMeasured,
    PointProgressed,
    PointsAdded,
    SweepEnded,
    SweepEvent,
    SweepStarted,
)
from collectors.sweep.plan import ArmsPlan, PointKey, SweepPlan
from collectors.sweep.point import SweepPoint
from collectors.sweep.points import run_points
from collectors.sweep.records import PairedSummary
from collectors.sweep.rule import upward_exits
from collectors.sweep.session import SweepSession
from collectors.sweep.store import new_run_dir
from collectors.sweep.summary import summary_of


def refinement(plan: SweepPlan, rows: list[SweepPoint]) -> list[PointKey]:
    """Points at the batch between the two where the energy ratio leaves the break-even band
    upward, when there is one such place and room for a batch between them.

    The batch nearest the crossover can be one already measured whose pair was not trusted (a
    drifting plain arm): it is measured again. The points are a pass of their own, one past the
    plan's, so they are bracketed and judged apart from the grid's: a pass-wide flag of the grid's
    points at that batch does not exclude them, nor theirs the grid's.
    """
    summary = summary_of(rows)
    assert isinstance(summary, PairedSummary)  # rows of the paired sweep carry no class
    exits = upward_exits([(t.batch, t.energy_ratio) for t in summary.rows if t.trusted and t.energy_ratio])
    if not plan.refine or len(exits) != 1 or exits[0].above - exits[0].below < 2:
        return []
    cross = exits[0]
    # the batch nearest where the ratio leaves the band: it moves the recommendation's bracket
    batch = min(cross.above - 1, max(cross.below + 1, round(cross.band_high)))
    refine_pass = plan.passes
    return [
        PointKey(refine_pass, batch, "plain", "before"),
        PointKey(refine_pass, batch, "draft"),
        PointKey(refine_pass, batch, "plain", "after"),
    ]


def _run_schedule(sweep: SweepSession, schedule: list[PointKey]) -> Generator[SweepEvent, None, bool]:
    """The points in order; returns True when stopped. In a multi-arm sweep an arm other than plain
    that fails twice is recorded as failed, with its server's log tail, and its remaining points are
    skipped, the other arms' kept; in the paired sweep a failure ends the sweep."""
    if sweep.arms_plan.is_paired:
        return (yield from run_points(sweep, schedule, 0))
    for index, key in enumerate(schedule):
        if key.arm in sweep.failed_arms:
            continue
        try:
            if (yield from run_points(sweep, [key], index)):
                return True
        except SpectopError as exc:
            if key.arm == "plain":
                raise
            sweep.failed_arms[key.arm] = _with_log_tail(sweep, key.arm, str(exc))
            sweep.pool.stop_all()
            yield PointProgressed(index, key, f"arm failed: {exc.what}")
    return False


def _with_log_tail(sweep: SweepSession, arm: str, error: str) -> str:
    process = sweep.pool._running.get(arm)
    tail = process.log_tail() if process is not None else ""
    if not tail or "last lines of its log" in error:
        return error
    return f"{error}; last lines of its log:\n{scrub(tail, secrets_in(sweep.pool.arms[arm].argv))}"


def run_sweep(
    plan: ArmsPlan | SweepPlan,
    arms: tuple[ArmSpec, ...],
    sampler: Sampler | None,
    results_root: Path,
    should_stop: Callable[[], bool] = lambda: False,
    api_key: str | None = None,
    run_dir: Path | None = None,
) -> Iterator[SweepEvent]:
    """Run the sweep (a SweepPlan: the paired one), yielding progress; every completed point is on
    disk before it is yielded."""
    run_dir = run_dir or new_run_dir(results_root)
    sweep = SweepSession(plan, arms, sampler, run_dir, should_stop, api_key)
    schedule = sweep.arms_plan.schedule()
    sweep.store.write_meta(sweep.meta(len(schedule)))
    yield SweepStarted(run_dir, sweep.plan, tuple(schedule), arms)
    cancelled, error = False, None
    try:
        sweep.check_arms()
        sweep.ready(schedule[0])
        started = time.monotonic()
        sweep.idle_w, sweep.idle_flag = sweep.measure_idle()
        yield IdleMeasured(sweep.idle_w, time.monotonic() - started, sweep.idle_flag)
        cancelled = yield from _run_schedule(sweep, schedule)
        extra = [] if cancelled or not sweep.arms_plan.is_paired else refinement(sweep.plan, sweep.rows)
        if extra:
            yield PointsAdded(len(schedule), tuple(extra))
            schedule += extra
            cancelled = yield from run_points(sweep, extra, len(schedule) - len(extra))
    except KeyboardInterrupt:
        cancelled, error = True, "interrupted"
    except SpectopError as exc:
        error = str(exc)
    except httpx.HTTPError as exc:
        error = str(
            describe(
                exc, "start the server, or give its arm the right URL (--plain, --draft, --arm NAME=URL)"
            )
        )
    except Exception as exc:  # a bug or an answer nothing expected: the measured points still get a summary
        error = f"{type(exc).__name__}: {exc}"
    summary, unsaved = sweep.finish(len(schedule))
    yield SweepEnded(run_dir, summary, cancelled, error or unsaved)
