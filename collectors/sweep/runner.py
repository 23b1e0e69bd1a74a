"""The paired sweep as a generator of progress events with a stop callback (shared by TUI and CLI).

Pitfalls handled: an idle window the meter did not cover, or one too short for its update period,
is flagged and gives no baseline (net figures are left out rather than built on it); a point's
energy that the meter did not cover stays a lower bound and never becomes W or mJ/token; whatever
ends a sweep early (a point that failed twice, points.py; a bad answer; a bug), the points
measured get their summary and the error is told, never raised.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import httpx

from collectors.errors import SpectopError
from collectors.http import STREAM_TIMEOUT, describe, make_client
from collectors.meters.sampler import Sampler
from collectors.requests import latency
from collectors.requests.client import RequestSpec
from collectors.servers import default_route, detect, open_collector
from collectors.sweep import checks, measure
from collectors.sweep.arms import ArmPool, ArmSpec
from collectors.sweep.events import (
    IdleMeasured,
    PointsAdded,
    SweepEnded,
    SweepEvent,
    SweepStarted,
)
from collectors.sweep.measure import energy_fields
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.points import run_points
from collectors.sweep.prompts import PromptSet
from collectors.sweep.rule import upward_exits
from collectors.sweep.store import POINT_SCHEMA, RunStore, machine, new_run_dir
from collectors.sweep.summary import summarize
from collectors.sweep.tables import to_markdown, to_table_csv


def _client(api_key: str | None) -> httpx.AsyncClient:
    return make_client(api_key, STREAM_TIMEOUT)


class _Sweep:
    """State of one run; `run_sweep` drives it."""

    def __init__(
        self,
        plan: SweepPlan,
        arms: tuple[ArmSpec, ...],
        sampler: Sampler | None,
        run_dir: Path,
        should_stop: Callable[[], bool],
        api_key: str | None,
    ) -> None:
        self.plan, self.arms, self.sampler = plan, arms, sampler
        self.should_stop, self.api_key = should_stop, api_key
        self.store = RunStore(run_dir)
        self.pool = ArmPool(arms, run_dir)
        self.rows: list[dict[str, Any]] = []
        self.identity: dict[str, dict[str, Any]] = {}
        self.idle_w: float | None = None
        self.idle_flag: dict[str, str] | None = None  # why the idle window gave no baseline
        self.meter = asdict(sampler.meter.info) if sampler else None

    async def _identify(self, arm: str, url: str) -> dict[str, Any]:
        """The arm's server as the sweep rows record it: one poll through its dialect's collector."""
        async with _client(self.api_key) as client:
            backend = await detect(url, client)
            snap = await open_collector(url, backend, client=client).poll()
            if snap.status in ("error", "unreachable"):
                raise SpectopError(f"the {arm} server at {url}: {snap.error}", snap.fix or "")
            return {
                "url": url,
                "backend": backend,
                "command": self.pool.arms[arm].command,
                "build": snap.build,
                "model": snap.model,
                "drafting": snap.drafting,
                "slots_total": snap.slots_total,
            }

    def ready(self, key: PointKey) -> str:
        starts = self.pool.starts
        url = self.pool.ready(key.arm, fresh=self.plan.fresh_server)
        if key.arm not in self.identity or self.pool.starts != starts:
            self.identity[key.arm] = asyncio.run(self._identify(key.arm, url))
        return url

    def measure_idle(self) -> tuple[float | None, dict[str, str] | None]:
        """Idle power, or None and the flag saying why the window is no baseline."""
        if self.sampler is None:
            return None, None
        t0 = time.monotonic()
        while time.monotonic() - t0 < self.plan.idle_s and not self.should_stop():
            time.sleep(0.05)
        window = self.sampler.energy_between(t0, time.monotonic(), wait_s=2.0)
        flag = checks.idle_flag(window)
        return (None if flag else window.power_w), flag

    def prompts_for(self, key: PointKey) -> PromptSet:
        """The prompts a point sends: one set for the whole paired sweep (per class in a multi-arm one)."""
        return self.plan.prompts

    def specs(
        self, batch: int, backend: str, tokens: int, prompts: PromptSet | None = None
    ) -> list[RequestSpec]:
        route = self.plan.route or default_route(backend)
        prompts = prompts or self.plan.prompts
        return [
            RequestSpec(
                prompt=prompts.for_request(i),
                max_tokens=tokens,
                route=route,
                temperature=self.plan.temperature,
                dialect=backend,
            )
            for i in range(batch)
        ]

    async def run_point(self, url: str, key: PointKey, warm: bool) -> measure.Window:
        backend = self.identity[key.arm]["backend"]
        async with _client(self.api_key) as client:
            if warm:
                spec = self.specs(1, backend, self.plan.warmup_tokens, self.prompts_for(key))[0]
                await measure.warm_up(client, url, replace(spec, ignore_eos=True))
                return measure.Window(0.0, 0.0, [])
            collector = open_collector(url, backend, client=client)
            return await measure.measure(
                client,
                url,
                self.specs(key.batch, backend, self.plan.max_tokens, self.prompts_for(key)),
                collector,
                self.should_stop,
                tag=f"sweep:{key.arm}:{key.batch}",
                mark=self.sampler.mark if self.sampler else None,
            )

    def point_row(self, index: int, key: PointKey, window: measure.Window) -> dict[str, Any]:
        figures = measure.window_figures(window)
        row: dict[str, Any] = {
            "schema": POINT_SCHEMA,
            "index": index,
            "pass": key.pass_index,
            "batch": key.batch,
            "arm": key.arm,
            "phase": key.phase,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        row.update(figures)
        # energy over the marked window (exact ends on a counter); tok/s over first send to last token
        e0, e1 = window.energy_t0_s or window.t0_s, window.energy_t1_s or window.t1_s
        energy = self.sampler.energy_between(e0, e1, wait_s=2.0) if self.sampler else None
        tokens, seconds = row["committed_tokens"], row["window_s"]
        row["energy_window_s"] = e1 - e0
        row["tok_s"] = tokens / seconds if seconds > 0 else None
        row.update(energy_fields(energy, e1 - e0, tokens, self.idle_w), idle_flag=self.idle_flag)
        # every gap, so the summary's tails are percentiles of all its points' gaps pooled
        row["chunk_gaps_ms"] = [round(g, 3) for r in window.records for g in latency.chunk_gaps_ms(r.events)]
        row.update(
            server=self.identity.get(key.arm),
            meter=self.meter,
            machine=machine(),
            prompts={"set": self.plan.prompts.name, "digest": self.plan.prompts.digest},
            max_tokens=self.plan.max_tokens,
            temperature=self.plan.temperature,
        )
        method = self.meter["method"] if self.meter else "none"
        row["flags"] = checks.point_flags(row, self.plan.max_tokens, method, energy)
        self._cross_checks(row, key)
        return row

    def _cross_checks(self, row: dict[str, Any], key: PointKey) -> None:
        def find(arm: str, phase: str) -> dict[str, Any] | None:
            return next(
                (
                    r
                    for r in reversed(self.rows)
                    if r["pass"] == key.pass_index
                    and r["batch"] == key.batch
                    and r["arm"] == arm
                    and r["phase"] == phase
                ),
                None,
            )

        extra = []
        if key.arm == "draft":
            extra.append(checks.mismatch_flag(row, find("plain", "before")))
        if key.phase == "after":
            extra.append(checks.drift_flag(row, find("plain", "before"), self.plan.drift_limit))
        row["flags"] += [f for f in extra if f]

    def meta(self, planned: int) -> dict[str, Any]:
        return {
            "schema": "spectop.run/1",
            "plan": {
                **asdict(self.plan),
                "prompts": {
                    "set": self.plan.prompts.name,
                    "digest": self.plan.prompts.digest,
                    "prompts": list(self.plan.prompts.prompts),
                },
            },
            "arms": [a.saved() for a in self.arms],
            "meter": self.meter,
            "machine": machine(),
            "planned_points": planned,
            "idle_w": self.idle_w,
            "idle_flag": self.idle_flag,
            "servers": self.identity,
        }

    def finish(self, planned: int) -> tuple[dict[str, Any], str | None]:
        """The summary of every completed point, and why its files could not be written (a full disk)."""
        self.pool.stop_all()
        summary = summarize(
            self.rows, {"planned_points": planned, "idle_w": self.idle_w, "idle_flag": self.idle_flag}
        )
        try:
            self.store.write_meta(self.meta(planned))
            self.store.write_summary(summary, to_table_csv(summary), to_markdown(summary))
        except SpectopError as exc:
            return summary, str(exc)
        return summary, None


def refinement(plan: SweepPlan, rows: list[dict[str, Any]]) -> list[PointKey]:
    """Points at the batch between the two where the energy ratio leaves the break-even band
    upward, when there is one such place and room for a batch between them.

    The batch nearest the crossover can be one already measured whose pair was not trusted (a
    drifting plain arm): it is measured again. The points are a pass of their own, one past the
    plan's, so they are bracketed and judged apart from the grid's: a pass-wide flag of the grid's
    points at that batch does not exclude them, nor theirs the grid's.
    """
    table = summarize(rows)["rows"]
    exits = upward_exits([(t["batch"], t["energy_ratio"]) for t in table if t["trusted"]])
    if not plan.refine or len(exits) != 1 or exits[0]["above"] - exits[0]["below"] < 2:
        return []
    cross = exits[0]
    batch = min(cross["above"] - 1, max(cross["below"] + 1, round(cross["batch"])))
    refine_pass = plan.passes
    return [
        PointKey(refine_pass, batch, "plain", "before"),
        PointKey(refine_pass, batch, "draft"),
        PointKey(refine_pass, batch, "plain", "after"),
    ]


def run_sweep(
    plan: SweepPlan,
    arms: tuple[ArmSpec, ArmSpec],
    sampler: Sampler | None,
    results_root: Path,
    should_stop: Callable[[], bool] = lambda: False,
    api_key: str | None = None,
    run_dir: Path | None = None,
) -> Iterator[SweepEvent]:
    """Run the paired sweep, yielding progress; every completed point is on disk before it is yielded."""
    run_dir = run_dir or new_run_dir(results_root)
    sweep = _Sweep(plan, arms, sampler, run_dir, should_stop, api_key)
    schedule = plan.schedule()
    sweep.store.write_meta(sweep.meta(len(schedule)))
    yield SweepStarted(run_dir, plan, tuple(schedule), arms)
    cancelled, error = False, None
    try:
        sweep.ready(PointKey(0, plan.batches[0], "plain", "before"))
        started = time.monotonic()
        sweep.idle_w, sweep.idle_flag = sweep.measure_idle()
        yield IdleMeasured(sweep.idle_w, time.monotonic() - started, sweep.idle_flag)
        cancelled = yield from run_points(sweep, schedule, 0)
        extra = [] if cancelled else refinement(plan, sweep.rows)
        if extra:
            yield PointsAdded(len(schedule), tuple(extra))
            schedule += extra
            cancelled = yield from run_points(sweep, extra, len(schedule) - len(extra))
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
