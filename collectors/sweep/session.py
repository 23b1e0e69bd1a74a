"""The state of one sweep run: its arms' servers, the idle baseline, each point's requests and row,
the cross checks between arms, and the run's files (runner.py drives it).

Pitfalls handled: an idle window the meter did not cover, or one too short for its update period,
is flagged and gives no baseline (net figures are left out rather than built on it); a point's
energy that the meter did not cover stays a lower bound and never becomes W or mJ/token; every
drafting arm's outputs are compared with plain's on the same class, pass and batch (any arm may
differ, not only "draft"); plain's drift is checked within its own class block.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import httpx

from collectors.errors import SpectopError
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters.sampler import Sampler
from collectors.requests import latency
from collectors.requests.client import RequestSpec
from collectors.servers import default_route, detect, open_collector
from collectors.sweep import checks, measure
from collectors.sweep.arms import ArmPool, ArmSpec
from collectors.sweep.measure import energy_fields
from collectors.sweep.plan import ArmsPlan, PointKey, SweepPlan, paired
from collectors.sweep.prompts import PromptSet
from collectors.sweep.sentences import to_markdown
from collectors.sweep.store import ARMS_RUN_SCHEMA, POINT_SCHEMA, RUN_SCHEMA, RunStore, machine
from collectors.sweep.summary import summarize_record, summary_of
from collectors.sweep.tables import to_table_csv


def client(api_key: str | None) -> httpx.AsyncClient:
    return make_client(api_key, STREAM_TIMEOUT)


class SweepSession:
    """State of one run; `runner.run_sweep` drives it."""

    def __init__(
        self,
        plan: ArmsPlan | SweepPlan,
        arms: tuple[ArmSpec, ...],
        sampler: Sampler | None,
        run_dir: Path,
        should_stop: Callable[[], bool],
        api_key: str | None,
    ) -> None:
        self.arms_plan = plan if isinstance(plan, ArmsPlan) else paired(plan)
        self.plan, self.arms, self.sampler = self.arms_plan.base, arms, sampler
        self.should_stop, self.api_key = should_stop, api_key
        self.store = RunStore(run_dir)
        self.pool = ArmPool(arms, run_dir)
        self.rows: list[dict[str, Any]] = []
        self.identity: dict[str, dict[str, Any]] = {}
        self.idle_w: float | None = None
        self.idle_flag: dict[str, str] | None = None  # why the idle window gave no baseline
        self.meter = asdict(sampler.meter.info) if sampler else None
        self.failed_arms: dict[str, str] = {}  # arm: why, with its server's log tail

    async def _identify(self, arm: str, url: str) -> dict[str, Any]:
        """The arm's server as the sweep rows record it: one poll through its dialect's collector."""
        async with client(self.api_key) as http:
            backend = await detect(url, http)
            snap = await open_collector(url, backend, client=http).poll()
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
        # a counter read once a second: the window starts on a reading (energy_between reads its end)
        self.sampler.mark()
        t0 = time.monotonic()
        while time.monotonic() - t0 < self.plan.idle_s and not self.should_stop():
            time.sleep(0.05)
        window = self.sampler.energy_between(t0, time.monotonic(), wait_s=2.0)
        flag = checks.idle_flag(window)
        return (None if flag else window.power_w), flag

    def prompts_for(self, key: PointKey) -> PromptSet:
        """The prompts a point sends: its class's (the paired sweep's one set)."""
        return self.arms_plan.prompt_set(key.prompt_class)

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
        async with client(self.api_key) as http:
            if warm:
                spec = self.specs(1, backend, self.plan.warmup_tokens, self.prompts_for(key))[0]
                await measure.warm_up(http, url, replace(spec, ignore_eos=True))
                return measure.Window(0.0, 0.0, [])
            collector = open_collector(url, backend, client=http)
            return await measure.measure(
                http,
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
        prompts = self.prompts_for(key)
        row.update(
            server=self.identity.get(key.arm),
            meter=self.meter,
            machine=machine(),
            prompts={"set": prompts.name, "digest": prompts.digest},
            max_tokens=self.plan.max_tokens,
            temperature=self.plan.temperature,
        )
        method = self.meter["method"] if self.meter else "none"
        row["flags"] = checks.point_flags(row, self.plan.max_tokens, method, energy)
        self._cross_checks(row, key)
        if key.prompt_class:  # a multi-arm sweep's point; the paired sweep's rows have no class
            row["prompt_class"] = key.prompt_class
        return row

    def _cross_checks(self, row: dict[str, Any], key: PointKey) -> None:
        def plain(phase: str) -> dict[str, Any] | None:
            return next(
                (
                    r
                    for r in reversed(self.rows)
                    if (r["pass"], r["batch"], r["arm"], r["phase"], r.get("prompt_class", ""))
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
        meta: dict[str, Any] = {
            "schema": RUN_SCHEMA,
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
        if not self.arms_plan.is_paired:
            meta["schema"] = ARMS_RUN_SCHEMA
            meta["arm_names"] = ["plain", *self.arms_plan.arm_names]
            meta["classes"] = [
                {"name": c.name, "digest": c.digest, "prompts": list(c.prompts)}
                for c in self.arms_plan.classes
            ]
            meta["shuffle_seed"] = self.arms_plan.seed
            meta["failed_arms"] = dict(self.failed_arms)
        return meta

    def finish(self, planned: int) -> tuple[dict[str, Any], str | None]:
        """The summary of every completed point, and why its files could not be written (a full disk)."""
        self.pool.stop_all()
        meta = self.meta(planned)
        record = summary_of(self.rows, meta)
        summary = summarize_record(record)
        try:
            self.store.write_meta(meta)
            self.store.write_summary(summary, to_table_csv(record), to_markdown(record))
        except SpectopError as exc:
            return summary, str(exc)
        return summary, None
