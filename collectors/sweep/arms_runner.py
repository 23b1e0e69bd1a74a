"""The multi-arm sweep (seed 001's question: which drafting, for which traffic) as a generator of the
same progress events as the paired sweep, with the same protocol per arm (runner.py, collectors/docs/sweep.md).

Each point is measured as in the paired sweep: the arm's server ready (one launched server at a time,
so arms that share a device never run together), a warm-up, B concurrent requests of its class's
prompts at temperature 0 and a fixed length, the server's counters around the window. Pitfalls
handled: every drafting arm's outputs are compared with plain's on the same class, pass and batch
(any arm may differ, not only "draft"); plain's drift is checked within its own class block; an arm
that fails (its server crashes, twice) ends the sweep with the points so far summarized and its
log named, never a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import httpx

from collectors.errors import SpectopError
from collectors.http import describe
from collectors.meters.sampler import Sampler
from collectors.redact import scrub, secrets_in
from collectors.sweep import checks, measure
from collectors.sweep.arms import ArmSpec
from collectors.sweep.arms_plan import ArmsPlan
from collectors.sweep.arms_summary import summarize_arms
from collectors.sweep.arms_tables import to_arms_csv, to_arms_markdown
from collectors.sweep.events import IdleMeasured, PointProgressed, SweepEnded, SweepEvent, SweepStarted
from collectors.sweep.plan import PointKey
from collectors.sweep.points import run_points
from collectors.sweep.prompts import PromptSet
from collectors.sweep.runner import _Sweep
from collectors.sweep.store import RunStore, load_run, new_run_dir
from collectors.sweep.summary import summarize

ARMS_RUN_SCHEMA = "spectop.run-arms/1"


class _ArmsSweep(_Sweep):
    """A paired sweep's state with named arms and a prompt class per point."""

    def __init__(
        self,
        plan: ArmsPlan,
        arms: tuple[ArmSpec, ...],
        sampler: Sampler | None,
        run_dir: Path,
        should_stop: Callable[[], bool],
        api_key: str | None,
    ) -> None:
        super().__init__(plan.base, arms, sampler, run_dir, should_stop, api_key)
        self.arms_plan = plan
        self.failed_arms: dict[str, str] = {}  # arm: why, with its server's log tail

    def prompts_for(self, key: PointKey) -> PromptSet:
        return self.arms_plan.prompt_set(key.prompt_class)

    def point_row(self, index: int, key: PointKey, window: measure.Window) -> dict[str, Any]:
        row = super().point_row(index, key, window)
        prompts = self.prompts_for(key)
        row.update(prompt_class=key.prompt_class, prompts={"set": prompts.name, "digest": prompts.digest})
        return row

    def _cross_checks(self, row: dict[str, Any], key: PointKey) -> None:
        def plain(phase: str) -> dict[str, Any] | None:
            return next(
                (
                    r
                    for r in reversed(self.rows)
                    if (r["pass"], r["batch"], r["arm"], r["phase"], r.get("prompt_class"))
                    == (key.pass_index, key.batch, "plain", phase, key.prompt_class)
                ),
                None,
            )

        extra = []
        if key.arm != "plain":
            extra.append(checks.mismatch_flag(row, plain("before")))
        if key.phase == "after":
            extra.append(checks.drift_flag(row, plain("before"), self.plan.drift_limit))
        row["flags"] += [f for f in extra if f]

    def meta(self, planned: int) -> dict[str, Any]:
        meta = super().meta(planned)
        meta["schema"] = ARMS_RUN_SCHEMA
        meta["arm_names"] = ["plain", *self.arms_plan.arm_names]
        meta["classes"] = [
            {"name": c.name, "digest": c.digest, "prompts": list(c.prompts)} for c in self.arms_plan.classes
        ]
        meta["shuffle_seed"] = self.arms_plan.seed
        meta["failed_arms"] = dict(self.failed_arms)
        return meta

    def finish(self, planned: int) -> tuple[dict[str, Any], str | None]:
        self.pool.stop_all()
        summary = summarize_arms(self.rows, self.meta(planned))
        try:
            self.store.write_meta(self.meta(planned))
            self.store.write_summary(summary, to_arms_csv(summary), to_arms_markdown(summary))
        except SpectopError as exc:
            return summary, str(exc)
        return summary, None


def _run_arms(sweep: _ArmsSweep, schedule: list[PointKey]) -> Generator[SweepEvent, None, bool]:
    """The points in order; an arm other than plain that fails twice is recorded as failed, with
    its server's log tail, and its remaining points are skipped, the other arms' kept."""
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


def _with_log_tail(sweep: _ArmsSweep, arm: str, error: str) -> str:
    process = sweep.pool._running.get(arm)
    tail = process.log_tail() if process is not None else ""
    if not tail or "last lines of its log" in error:
        return error
    return f"{error}; last lines of its log:\n{scrub(tail, secrets_in(sweep.pool.arms[arm].argv))}"


def run_arms_sweep(
    plan: ArmsPlan,
    arms: tuple[ArmSpec, ...],
    sampler: Sampler | None,
    results_root: Path,
    should_stop: Callable[[], bool] = lambda: False,
    api_key: str | None = None,
    run_dir: Path | None = None,
) -> Iterator[SweepEvent]:
    """Run the multi-arm sweep, yielding progress; every completed point is on disk before it is yielded."""
    run_dir = run_dir or new_run_dir(results_root)
    sweep = _ArmsSweep(plan, arms, sampler, run_dir, should_stop, api_key)
    schedule = plan.schedule()
    sweep.store.write_meta(sweep.meta(len(schedule)))
    yield SweepStarted(run_dir, plan.base, tuple(schedule), arms)
    cancelled, error = False, None
    try:
        sweep.ready(schedule[0])
        started = time.monotonic()
        sweep.idle_w, sweep.idle_flag = sweep.measure_idle()
        yield IdleMeasured(sweep.idle_w, time.monotonic() - started, sweep.idle_flag)
        cancelled = yield from _run_arms(sweep, schedule)
    except KeyboardInterrupt:
        cancelled, error = True, "interrupted"
    except SpectopError as exc:
        error = str(exc)
    except httpx.HTTPError as exc:
        error = str(describe(exc))
    except Exception as exc:  # a bug or an answer nothing expected: the measured points still get a summary
        error = f"{type(exc).__name__}: {exc}"
    summary, unsaved = sweep.finish(len(schedule))
    yield SweepEnded(run_dir, summary, cancelled, error or unsaved)


def rewrite_arms_summary(run_dir: Path) -> dict[str, Any]:
    """Summarize a multi-arm run from its files (a sweep cut short) and save it."""
    meta, rows = load_run(run_dir)
    summary = summarize_arms(rows, meta)
    RunStore(run_dir).write_summary(summary, to_arms_csv(summary), to_arms_markdown(summary))
    return summary


def is_arms_run(meta: dict[str, Any], rows: list[dict[str, Any]]) -> bool:
    """A multi-arm run: its meta says so, or (a run cut short before its meta) its points carry a class."""
    return meta.get("schema") == ARMS_RUN_SCHEMA or any(r.get("prompt_class") for r in rows)


def summarize_saved(run_dir: Path, skipped: list[str] | None = None) -> dict[str, Any]:
    """The summary of a saved run of either kind, from its files, without writing anything."""
    meta, rows = load_run(run_dir, skipped)
    return summarize_arms(rows, meta) if is_arms_run(meta, rows) else summarize(rows, meta)
