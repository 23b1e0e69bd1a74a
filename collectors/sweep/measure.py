"""One measured window: warm-up, B concurrent streamed requests, the server's counters around it.

Pitfalls handled: the server's counters are read through its dialect's `window_counters()`, so the
concurrency and other-traffic checks work on every dialect that has counters (and are left to the
busy samples on one that has none); a throttled meter's stale mark does not stretch the window.
Drafted, accepted and steps (every step) come from the requests' own counts when the server gave
them, else from its counters around the window (vLLM without per-request metrics), else they are
unknown (None) and G is read from stream bursts (`steps_exact` False), never 0 drafted or G 1.00
from missing data; counters the server printed rounded are marked (`counters_rounded`) and the
token comparison allows for them (`server_tokens_tolerance`). A request that fails (a bad answer,
a broken or endless stream) is kept as a record with its error, so the point is flagged
`request-errors` rather than measured as if fewer requests had been sent; only a point whose
every request failed raises. Each request's batch is the point's busy samples answered while it
ran (one sampler for the point: a sampler per request would poll the server B times as often).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import statistics
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import httpx

from collectors.energy import ledger
from collectors.errors import SpectopError
from collectors.http import describe
from collectors.meters.base import MeterReading
from collectors.meters.window import WindowEnergy
from collectors.requests import latency
from collectors.requests.client import RequestSpec, busy_sampling, failed_record, stream_request
from collectors.requests.record import RequestRecord, busy_figures
from collectors.servers.base import Collector, WindowCounters, WindowDelta, window_delta
from collectors.sweep.point import EnergyFigures, RequestFigures, WindowFigures

MARK_TOLERANCE_S = 0.25  # a mark further than this from the window's edge is not that edge


@dataclass
class Window:
    """What the requests of one point did, on the monotonic clock."""

    t0_s: float
    t1_s: float
    records: list[RequestRecord]
    busy_samples: list[int] = field(default_factory=list)
    before: WindowCounters | None = None  # the server's counters just before the first send
    after: WindowCounters | None = None  # and just after the last completion
    cancelled: bool = False
    energy_t0_s: float | None = None  # meter marks around the window, where the meter was read
    energy_t1_s: float | None = None


async def warm_up(client: httpx.AsyncClient, url: str, spec: RequestSpec) -> None:
    """One short unmeasured request so the first window does not pay for cold caches."""
    await stream_request(client, url, spec, tag="warm-up")


async def measure(
    client: httpx.AsyncClient,
    url: str,
    specs: list[RequestSpec],
    collector: Collector | None,
    should_stop: Callable[[], bool],
    tag: str,
    mark: Callable[[], MeterReading | None] | None = None,
    offsets_s: list[float] | None = None,
) -> Window:
    """Send all specs at once, or spec i `offsets_s[i]` seconds after the window starts (an
    open-loop point); the window runs from its start to the last completion.

    `mark` reads the meter just before the window starts and just after the last completion, so
    the energy window has exact ends on a counter meter.
    """
    before = await collector.window_counters() if collector else None
    async with busy_sampling(collector.busy_slots if collector else None, 0.05) as busy:
        mark0 = await asyncio.to_thread(mark) if mark else None
        t0 = time.monotonic()
        delays = offsets_s or [0.0] * len(specs)
        tasks = [
            asyncio.create_task(
                _send_at(
                    t0 + d, functools.partial(stream_request, client, url, s, tag=tag, concurrent=len(specs))
                )
            )
            for s, d in zip(specs, delays)
        ]
        cancelled = False
        while not all(t.done() for t in tasks):
            await asyncio.wait(tasks, timeout=0.2)
            if should_stop() and not all(t.done() for t in tasks):
                cancelled = True
                for t in tasks:
                    t.cancel()
                break
        await asyncio.gather(*tasks, return_exceptions=True)
    records: list[RequestRecord] = []
    errors: list[SpectopError] = []
    for spec, t, delay_s in zip(specs, tasks, delays):
        if t.cancelled():
            continue
        error = t.exception()
        if error is None:
            records.append(_with_batch(t.result(), busy, len(specs)))
            continue
        if isinstance(error, httpx.HTTPError):
            error = describe(error)
        if not isinstance(error, SpectopError):
            raise error
        errors.append(error)
        records.append(failed_record(url, spec, t0 + delay_s, time.monotonic(), str(error), tag))
    if errors and len(errors) == len(records):
        raise errors[0]
    t1 = max((r.t_done_s for r in records), default=time.monotonic())
    mark1 = await asyncio.to_thread(mark) if mark and not cancelled else None
    after = await collector.window_counters() if collector and not cancelled else None
    # a throttled meter (a remote exporter) answers a mark with an old reading: then interpolate
    t_mark0 = mark0.t_s if mark0 is not None and 0 <= t0 - mark0.t_s < MARK_TOLERANCE_S else None
    t_mark1 = mark1.t_s if mark1 is not None and 0 <= mark1.t_s - t1 < MARK_TOLERANCE_S else None
    return Window(
        t0,
        t1,
        records,
        [b for _, b in busy],
        before,
        after,
        cancelled,
        energy_t0_s=t_mark0,
        energy_t1_s=t_mark1,
    )


async def _send_at(at_s: float, request: Callable[[], Coroutine[Any, Any, RequestRecord]]) -> RequestRecord:
    """The request, sent at `at_s` on the monotonic clock (at once when that has passed)."""
    delay_s = at_s - time.monotonic()
    if delay_s > 0:
        await asyncio.sleep(delay_s)
    return await request()


def _with_batch(record: RequestRecord, busy: list[tuple[float, int]], sent: int) -> RequestRecord:
    """The request with its batch: the point's busy samples answered while it ran (one sampler
    for the point, not one per request polling the server); a request too short for any, the
    point's samples; a point too short for any, the requests sent at once."""
    during = [b for t_s, b in busy if record.t_send_s <= t_s <= record.t_done_s]
    mean, most = busy_figures(during)
    if mean is None:
        mean, most = busy_figures(b for _, b in busy)
    if mean is None:
        mean, most = float(sent), sent
    return dataclasses.replace(record, concurrency_mean=mean, concurrency_max=most)


def _pct(values: list[float], q: float) -> float | None:
    import numpy as np  # here: the CLI loads this module, and the dashboard's first frame needs no numpy

    return float(np.percentile(values, q)) if values else None


def drafting_counts(
    records: list[RequestRecord], server: WindowDelta
) -> tuple[int | None, int | None, int | None, str | None]:
    """(drafted, accepted, steps, source): the requests' counts, else the counters', else unknown."""
    done = [r for r in records if r.ok]
    if done and all(r.steps_exact for r in done):
        drafted = sum(r.draft_n or 0 for r in done)
        accepted = sum(r.draft_n_accepted or 0 for r in done)
        return drafted, accepted, sum(r.steps for r in done), "requests"
    if server.drafted is not None and server.accepted is not None and server.steps is not None:
        return server.drafted, server.accepted, server.steps, "server counters"
    return None, None, None, None


def window_figures(window: Window) -> WindowFigures:
    """Token, drafting, concurrency and latency figures of a window (energy is added by the caller)."""
    records = window.records
    committed = sum(r.committed_tokens or 0 for r in records)
    server = window_delta(window.before, window.after)
    drafted, accepted, steps, source = drafting_counts(records, server)
    if steps is not None:
        advance = ledger.mean_committed_advance(accepted or 0, steps)
    else:  # no counts anywhere: tokens per burst after the first, flagged `steps-inferred`
        bursts = [size for r in records if r.ok for size in r.latency.burst_sizes[1:]]
        advance = ledger.mean_committed_advance(sum(bursts) - len(bursts), len(bursts))
    chunk_gaps = [g for r in records for g in latency.chunk_gaps_ms(r.events)]
    step_gaps = [g for r in records for g in latency.step_gaps_ms(r.events, drafting=bool(r.draft_n))]
    ttfts = [r.latency.ttft_ms for r in records if r.latency.ttft_ms is not None]
    busy_mean = statistics.fmean(window.busy_samples) if window.busy_samples else None
    return WindowFigures(
        window_s=window.t1_s - window.t0_s,
        committed_tokens=committed,
        drafted=drafted,
        accepted=accepted,
        steps=steps,
        steps_exact=source is not None,
        drafting_source=source,
        acceptance=ledger.acceptance(drafted, accepted or 0) if drafted is not None else None,
        mean_advance=advance,
        verified_width=ledger.mean_verified_width(drafted, steps) if drafted is not None and steps else None,
        # busy slots averaged over every decode of the window, where the server says: the batch it ran
        concurrency_mean=busy_mean if server.busy_per_decode is None else server.busy_per_decode,
        concurrency_max=max(window.busy_samples) if window.busy_samples else None,
        ttft_ms_p50=_pct(ttfts, 50),
        chunk_gap_ms_p50=_pct(chunk_gaps, 50),
        chunk_gap_ms_p95=_pct(chunk_gaps, 95),
        chunk_gap_ms_p99=_pct(chunk_gaps, 99),
        chunk_gap_ms_max=max(chunk_gaps) if chunk_gaps else None,
        step_gap_ms_p95=_pct(step_gaps, 95),
        step_gap_ms_p99=_pct(step_gaps, 99),
        # the server's own counts (llama-server and SGLang count a request when it ends)
        server_tokens=server.tokens,
        server_tokens_tolerance=server.tokens_tolerance,
        server_drafted=server.drafted,
        server_accepted=server.accepted,
        server_steps=server.steps,
        server_drafted_steps=server.drafted_steps,
        server_busy_per_decode=server.busy_per_decode,
        counters_rounded=server.rounded,
        requests=tuple(
            RequestFigures(
                request_id=r.request_id,
                committed_tokens=r.committed_tokens,
                draft_n=r.draft_n,
                draft_n_accepted=r.draft_n_accepted,
                steps=r.steps,
                steps_exact=r.steps_exact,
                ttft_ms=r.latency.ttft_ms,
                tok_s=r.tok_s,
                finish_reason=r.finish_reason,
                text_sha256=r.text_sha256,
                error=r.error,
            )
            for r in records
        ),
    )


def energy_fields(
    energy: WindowEnergy | None, energy_window_s: float, tokens: int, idle_w: float | None
) -> EnergyFigures:
    """A point's energy figures. Energy the meter did not cover is a lower bound: it is kept as
    `energy_j` beside `energy_covered: false`, and never turned into W, mJ/token or net figures."""
    measured_j = energy.energy_j if energy else None
    covered = energy.covered if energy else False
    energy_j = measured_j if covered else None
    net_j = (
        ledger.net_energy_j(energy_j, idle_w, energy_window_s)
        if energy_j is not None and idle_w is not None
        else None
    )
    return EnergyFigures(
        energy_j=measured_j,
        energy_covered=covered,
        short_window=energy.short_window if energy else False,
        meter_update_period_s=energy.update_period_s if energy else None,
        idle_w=idle_w,
        net_energy_j=net_j,
        power_w=energy_j / energy_window_s if energy_j is not None and energy_window_s > 0 else None,
        mj_per_token=ledger.mj_per_token(energy_j, tokens) if energy_j is not None else None,
        net_mj_per_token=ledger.mj_per_token(net_j, tokens) if net_j is not None else None,
    )
