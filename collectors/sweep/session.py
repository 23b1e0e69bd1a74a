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
from collectors.sweep.open_loop import arrival_offsets_s, in_flight, parse_arrivals
from collectors.sweep.plan import OPEN_LOOP_KEYS, ArmsPlan, PointKey, SweepPlan, paired
from collectors.sweep.point import Flag, OpenLoad, PromptsUsed, ServerIdentity, SweepPoint
from collectors.sweep.prompts import PromptSet
from collectors.sweep.records import Summary
from collectors.sweep.run_meta import ARMS_RUN_SCHEMA, PlanPrompts, PlanSaved, PromptsSaved, RunMeta
from collectors.sweep.sentences import to_markdown
from collectors.sweep.store import RunStore, machine
from collectors.sweep.summary import summary_of
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
        self.rows: list[SweepPoint] = []
        self.identity: dict[str, ServerIdentity] = {}
        self.idle_w: float | None = None
        self.idle_flag: Flag | None = None  # why the idle window gave no baseline
        self.meter = sampler.meter.info if sampler else None
        self.failed_arms: dict[str, str] = {}  # arm: why, with its server's log tail

    async def _identify(self, arm: str, url: str) -> ServerIdentity:
        """The arm's server as the sweep rows record it: one poll through its dialect's collector."""
        async with client(self.api_key) as http:
            backend = await detect(url, http, self.pool.arms[arm].option)
            snap = await open_collector(url, backend, client=http).poll()
            if snap.status in ("error", "unreachable"):
                raise SpectopError(f"the {arm} server at {url}: {snap.error}", snap.fix or "")
            return ServerIdentity(
                url=url,
                backend=backend,
                command=self.pool.arms[arm].command,
                build=snap.build,
                model=snap.model,
                drafting=snap.drafting,
                slots_total=snap.slots_total,
                draft_tokens=snap.draft_tokens if snap.drafting else None,
            )

    def check_arms(self) -> None:
        """Every arm given as a running server answers, and every launched arm's program exists,
        before anything is measured: a draft server that is down must not cost a plain pass first.
        In a multi-arm sweep an arm besides plain that fails this is a failed arm, the rest run."""
        for arm in self.arms:
            try:
                if arm.launched:
                    arm.check_program()
                else:
                    self.identity[arm.name] = asyncio.run(self._identify(arm.name, arm.url))
            except SpectopError as exc:
                if self.arms_plan.is_paired or arm.name == "plain":
                    raise
                self.failed_arms[arm.name] = str(exc)

    def ready(self, key: PointKey) -> str:
        starts = self.pool.starts
        url = self.pool.ready(key.arm, fresh=self.plan.fresh_server)
        if key.arm not in self.identity or self.pool.starts != starts:
            self.identity[key.arm] = asyncio.run(self._identify(key.arm, url))
        return url

    def measure_idle(self) -> tuple[float | None, Flag | None]:
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
        backend = self.identity[key.arm].backend or ""
        async with client(self.api_key) as http:
            if warm:
                spec = self.specs(1, backend, self.plan.warmup_tokens, self.prompts_for(key))[0]
                await measure.warm_up(http, url, replace(spec, ignore_eos=True))
                return measure.Window(0.0, 0.0, [])
            collector = open_collector(url, backend, client=http)
            load = self.open_load(key)
            return await measure.measure(
                http,
                url,
                self.specs(
                    load.requests if load else key.batch, backend, self.plan.max_tokens, self.prompts_for(key)
                ),
                collector,
                self.should_stop,
                tag=f"sweep:{key.arm}:{key.batch}" if load is None else f"sweep:{key.arm}:{load.label}",
                mark=self.sampler.mark if self.sampler else None,
                offsets_s=self.offsets_s(key),
            )

    def open_load(self, key: PointKey, window: measure.Window | None = None) -> OpenLoad | None:
        """An open-loop point's offered load (with how late `window`'s sends were); None for a
        closed-loop one."""
        if key.rate_rps is None:
            return None
        load = OpenLoad(
            rate_rps=key.rate_rps,
            arrivals=parse_arrivals(self.plan.arrivals).spec,
            seed=self.plan.arrival_seed,
            requests=self.plan.rate_requests,
        )
        offsets = self.offsets_s(key) if window is not None else None
        if window is None or offsets is None or len(window.records) != len(offsets):
            return load
        late_ms = [1000 * (r.t_send_s - window.t0_s - o) for r, o in zip(window.records, offsets)]
        import numpy as np  # here: the CLI loads this module, and the first frame needs no numpy

        return replace(load, send_late_ms_p90=round(float(np.percentile(late_ms, 90)), 3))

    def offsets_s(self, key: PointKey) -> list[float] | None:
        """An open-loop point's send times: the same for plain and draft at a rate in a pass."""
        load = self.open_load(key)
        if load is None:
            return None
        seed = (load.seed, key.pass_index, load.rate_rps, key.prompt_class)
        return arrival_offsets_s(load.requests, load.rate_rps, parse_arrivals(load.arrivals), seed)

    def point_row(self, index: int, key: PointKey, window: measure.Window) -> SweepPoint:
        figures = measure.window_figures(window)
        # energy over the marked window (exact ends on a counter); tok/s over first send to last token
        e0, e1 = window.energy_t0_s or window.t0_s, window.energy_t1_s or window.t1_s
        energy = self.sampler.energy_between(e0, e1, wait_s=2.0) if self.sampler else None
        tokens, seconds = figures.committed_tokens, figures.window_s
        prompts = self.prompts_for(key)
        point = SweepPoint(
            index=index,
            pass_index=key.pass_index,
            batch=key.batch,
            arm=key.arm,
            phase=key.phase,
            started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            window=figures,
            energy_window_s=e1 - e0,
            tok_s=tokens / seconds if seconds > 0 else None,
            energy=energy_fields(energy, e1 - e0, tokens, self.idle_w),
            idle_flag=self.idle_flag,
            # every gap, so the summary's tails are percentiles of all its points' gaps pooled
            chunk_gaps_ms=tuple(round(g, 3) for r in window.records for g in latency.chunk_gaps_ms(r.events)),
            server=self.identity.get(key.arm),
            meter=self.meter,
            machine=machine(),
            prompts=PromptsUsed(prompts.name, prompts.digest),
            max_tokens=self.plan.max_tokens,
            temperature=self.plan.temperature,
            # a multi-arm sweep's point; the paired sweep's rows have no class
            prompt_class=key.prompt_class or None,
            load=self.open_load(key, window),
            # every request of the window, from the window's start to the last completion
            in_flight=in_flight(((r.t_send_s, r.t_done_s) for r in window.records), window.t0_s, window.t1_s),
        )
        method = self.meter.method if self.meter else "none"
        flags = checks.point_flags(point, self.plan.max_tokens, method, energy)
        return replace(point, flags=tuple(flags + self._cross_checks(point, key)))

    def _cross_checks(self, point: SweepPoint, key: PointKey) -> list[Flag]:
        def plain(phase: str) -> SweepPoint | None:
            return next(
                (
                    r
                    for r in reversed(self.rows)
                    if (r.pass_index, r.batch, r.rate_rps, r.arm, r.phase, r.prompt_class or "")
                    == (key.pass_index, key.batch, key.rate_rps, "plain", phase, key.prompt_class)
                ),
                None,
            )

        extra = []
        if key.arm != "plain":
            extra.append(checks.mismatch_flag(point, plain("before")))
        if key.phase == "after":
            extra.append(checks.drift_flag(point, plain("before"), self.plan.drift_limit))
        return [f for f in extra if f]

    def meta(self, planned: int) -> RunMeta:
        plan = self.plan
        meta = RunMeta(
            plan=PlanSaved(
                # a closed-loop run's meta.json is as it always was: no open-loop keys
                **{
                    k: v
                    for k, v in asdict(plan).items()
                    if k != "prompts" and (plan.rates or k not in OPEN_LOOP_KEYS)
                },
                prompts=PlanPrompts(plan.prompts.name, plan.prompts.digest, tuple(plan.prompts.prompts)),
            ),
            arms=self.arms,
            meter=self.meter,
            machine=machine(),
            planned_points=planned,
            idle_w=self.idle_w,
            idle_flag=self.idle_flag,
            servers=dict(self.identity),
        )
        if self.arms_plan.is_paired:
            return meta
        return replace(
            meta,
            schema=ARMS_RUN_SCHEMA,
            arm_names=("plain", *self.arms_plan.arm_names),
            classes=tuple(
                PromptsSaved(name=c.name, digest=c.digest, prompts=tuple(c.prompts))
                for c in self.arms_plan.classes
            ),
            shuffle_seed=self.arms_plan.seed,
            failed_arms=dict(self.failed_arms),
        )

    def finish(self, planned: int) -> tuple[Summary, str | None]:
        """The summary of every completed point, and why its files could not be written (a full disk)."""
        self.pool.stop_all()
        meta = self.meta(planned)
        summary = summary_of(self.rows, meta)
        try:
            self.store.write_meta(meta)
            self.store.write_summary(summary, to_table_csv(summary), to_markdown(summary))
        except SpectopError as exc:
            return summary, str(exc)
        return summary, None
