"""The series `spectop export` serves, built from each watched server's figures at scrape time.

Every figure comes from the same functions the dashboard shows it by (LiveLedger, the rolling
drafting snapshot, collectors/live/verdict.py), so a Grafana panel and the terminal agree. One family
per name with a sample per server, as the exposition format wants. Label values stay printable:
whoever curls the page sees them raw. SERIES lists every name served, for the deploy pack's tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from collectors.fmt import printable
from collectors.live.accounting import PowerPoint, RollingEnergy
from collectors.live.verdict import curve_at, curve_ratio_at
from collectors.meters import MeterInfo
from collectors.requests.per_request import accepted_per_step_from_survival
from collectors.servers.latency import QUANTILES, ServerLatency
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.records import Summary

if TYPE_CHECKING:  # the schedule's code loads only after a tune (--schedule)
    from collectors.tune.view import ScheduleView

LABELS = ["server", "backend", "model", "draft", "meter", "method", "energy"]

SERIES: dict[str, str] = {
    "spectop_up": "1 when the server answered the last poll",
    "spectop_drafting": "1 when the server drafts",
    "spectop_tokens_per_second": "tokens generated per second, in-flight requests included",
    "spectop_busy_slots": "requests running now",
    "spectop_slots": "request slots the server has",
    "spectop_draft_acceptance_ratio": "accepted over drafted tokens, rolling window",
    "spectop_mean_committed_advance": "tokens committed per verify step, every step counted (G), rolling window",
    "spectop_verified_width": "positions verified per step, rolling window",
    "spectop_survival_ratio": "share of verify steps whose accepted run reached the position (S_j), rolling window",
    "spectop_verify_steps_accepted_ratio": (
        "share of verify steps that accepted exactly `accepted` draft tokens (S_j - S_j+1), rolling window"
    ),
    "spectop_requests_per_decode": "requests per target forward pass (the actual batch)",
    "spectop_power_watts": "power now, from the meter",
    "spectop_idle_power_watts": "idle baseline",
    "spectop_meter_reading_age_seconds": "seconds since the meter's last reading",
    "spectop_meter_ok": "0 when the meter's joules over the window are no measurement (stuck, impossible)",
    "spectop_mj_per_token": "window joules over window tokens, gross",
    "spectop_net_mj_per_token": "window joules above idle over window tokens",
    "spectop_tokens_per_joule": "window tokens over window joules, gross (1000 / spectop_mj_per_token)",
    "spectop_draft_energy_ratio": (
        "drafting over plain mJ/token at the current batch: source=live when the server drafts "
        "(live figure over the last sweep's plain curve), source=sweep when it does not (what drafting would do)"
    ),
    "spectop_energy_joules": "energy the meter counted since spectop started",
    "spectop_kv_cache_usage_ratio": "share of the KV cache in use, mean over engines (vLLM, SGLang)",
    "spectop_requests_waiting": "requests waiting, by the engine's reason (vLLM: capacity, deferred)",
    "spectop_engine_sleeping": "1 when an engine sleeps with its weights offloaded (vLLM): idle power is not serving",
    "spectop_speculative_steps": "draft steps per verify pass the server runs now (SGLang spec_num_steps)",
    "spectop_server_latency_ms": (
        "the server's own latency quantile over the rolling window, from its histograms' bucket deltas "
        "(kind: ttft, itl, tpot, e2e, queue; linear inside the bucket, as histogram_quantile)"
    ),
    "spectop_server_prefix_cache_hit_ratio": "prompt tokens found in the prefix cache over those looked up, rolling window",
    "spectop_server_finished_requests": "requests the server finished in the rolling window, by finish reason",
    "spectop_schedule_info": (
        "1, after spectop tune (--schedule): the schedule (setting) and whether the server confirms the K "
        "it runs (read_back: read back, not read back, not in effect)"
    ),
    "spectop_schedule_windows_off": "poll windows the server ran another K than the schedule's (not counted)",
    "spectop_schedule_draft_tokens": "the draft length the tuned schedule gives at the current batch",
    "spectop_schedule_saved_joules": "energy the schedule saved against always-draft since spectop started",
    "spectop_schedule_saved_ratio": "that saving over what always-draft would have spent",
}


@dataclass(slots=True)
class FeedView:
    """One server's figures, read under the exporter's lock."""

    url: str
    meter: MeterInfo | None
    snapshot: ServerSnapshot | None
    rolling: RollingEnergy
    drafting: ServerSnapshot | None
    idle_w: float | None
    batch: float | None
    power: PowerPoint | None
    share_tokens: int | None = None  # tokens of every server on this meter, when it is shared
    server_latency: ServerLatency | None = None  # the server's own histograms over the window
    schedule: ScheduleView | None = None  # after a tune: the setting in effect and its saving

    def label_values(self) -> list[str]:
        snap = self.snapshot
        draft = "none" if snap is None or snap.drafting is False else (snap.spec_types or "unknown")
        values = (
            self.url,
            snap.backend if snap else "unknown",
            (snap.model if snap else None) or "unknown",
            draft,
            self.meter.name if self.meter else "none",
            self.meter.method if self.meter else "none",
            "shared" if self.share_tokens is not None else "own",
        )
        return [printable(v) for v in values]

    def energy_share(self) -> float | None:
        """This server's part of its meter's joules: all of them, or its share of the tokens."""
        if self.share_tokens is None:
            return 1.0
        return self.rolling.tokens / self.share_tokens if self.share_tokens else None

    def mj_per_token(self, value: float | None) -> float | None:
        """A rolling mJ/token with a shared meter's joules split by tokens."""
        share = self.energy_share()
        return None if value is None or share is None else value * share


def draft_energy_ratio(view: FeedView, summary: Summary | None) -> tuple[str, float] | None:
    """(source, ratio) of drafting to plain energy at the current batch, as the dashboard's verdict reads it."""
    snap, batch = view.snapshot, view.batch
    if summary is None or snap is None or batch is None:
        return None
    if snap.drafting is False:
        ratio = curve_ratio_at(summary, batch)
        return None if ratio is None else ("sweep", ratio)
    plain = curve_at(summary, "plain", batch)
    live = view.mj_per_token(view.rolling.mj_per_token)
    if plain is None or live is None or snap.drafting is None:
        return None
    return "live", live / plain


def series(views: Sequence[FeedView], summary: Summary | None) -> Iterator[Metric]:
    families: dict[str, GaugeMetricFamily] = {}

    def gauge(name: str, view: FeedView, value: float | None, **extra: str) -> None:
        if value is None:
            return
        if name not in families:
            families[name] = GaugeMetricFamily(name, SERIES[name], labels=LABELS + sorted(extra))
        # every label value is a server's text (a vLLM waiting reason too): printable, as the README says
        families[name].add_metric(
            view.label_values() + [printable(extra[k]) for k in sorted(extra)], float(value)
        )

    now_s = time.monotonic()
    for view in views:
        snap, drafting, rolling = view.snapshot, view.drafting, view.rolling
        gauge("spectop_up", view, 1.0 if snap and snap.ok else 0.0)
        if snap is not None:
            gauge("spectop_drafting", view, None if snap.drafting is None else float(snap.drafting))
            gauge("spectop_tokens_per_second", view, snap.live_tok_s)
            gauge("spectop_busy_slots", view, snap.slots_busy)
            gauge("spectop_slots", view, snap.slots_total)
            gauge("spectop_kv_cache_usage_ratio", view, snap.kv_cache_usage)
            for reason, waiting in snap.waiting_by_reason:
                gauge("spectop_requests_waiting", view, waiting, reason=reason)
            sleeping = snap.engine_sleeping
            gauge("spectop_engine_sleeping", view, None if sleeping is None else float(sleeping))
            gauge("spectop_speculative_steps", view, snap.spec_num_steps)
        if drafting is not None:  # over the rolling window, like mJ/token (collectors/servers/rolling.py)
            gauge("spectop_draft_acceptance_ratio", view, drafting.acceptance)
            gauge("spectop_mean_committed_advance", view, drafting.mean_advance)
            gauge("spectop_verified_width", view, drafting.verified_width)
            for position, survival in enumerate(drafting.survival, start=1):
                gauge("spectop_survival_ratio", view, survival, position=str(position))
            if drafting.survival:  # the same steps as S_j: every step, drafted or not
                for accepted, share in enumerate(accepted_per_step_from_survival(drafting.survival)):
                    gauge("spectop_verify_steps_accepted_ratio", view, share, accepted=str(accepted))
        server_latency(view, gauge)
        gauge("spectop_requests_per_decode", view, view.batch)
        gauge("spectop_power_watts", view, view.power.power_w if view.power else None)
        gauge("spectop_idle_power_watts", view, view.idle_w)
        if view.power is not None:
            gauge("spectop_meter_reading_age_seconds", view, max(0.0, now_s - view.power.t_s))
            gauge("spectop_meter_ok", view, 0.0 if rolling.meter_problem else 1.0)
        gauge("spectop_mj_per_token", view, view.mj_per_token(rolling.mj_per_token))
        gauge("spectop_net_mj_per_token", view, view.mj_per_token(rolling.net_mj_per_token))
        mj = view.mj_per_token(rolling.mj_per_token)
        gauge("spectop_tokens_per_joule", view, 1000.0 / mj if mj else None)
        if (ratio := draft_energy_ratio(view, summary)) is not None:
            gauge("spectop_draft_energy_ratio", view, ratio[1], source=ratio[0])
        if (tuned := view.schedule) is not None:
            gauge("spectop_schedule_info", view, 1.0, setting=tuned.setting, read_back=tuned.read_back)
            gauge("spectop_schedule_draft_tokens", view, tuned.k_scheduled)
            gauge("spectop_schedule_saved_joules", view, tuned.saved_j)
            gauge("spectop_schedule_saved_ratio", view, tuned.saved_fraction)
            gauge("spectop_schedule_windows_off", view, tuned.windows_off)
    yield from families.values()
    counter = CounterMetricFamily("spectop_energy_joules", SERIES["spectop_energy_joules"], labels=LABELS)
    for view in views:
        if view.power is not None:  # a shared meter's counter is the meter's, not the server's share
            counter.add_metric(view.label_values(), view.power.energy_j)
    if counter.samples:
        yield counter


def server_latency(view: FeedView, gauge: Callable[..., None]) -> None:
    """The server's own tails (one sample per kind and quantile), cache hit ratio and finish reasons."""
    latency = view.server_latency
    if latency is None:
        return
    for kind, tail in latency.tails.items():
        for q, value_ms in zip(QUANTILES, (tail.p50_ms, tail.p95_ms, tail.p99_ms), strict=True):
            gauge("spectop_server_latency_ms", view, value_ms, kind=kind, quantile=str(q))
    gauge("spectop_server_prefix_cache_hit_ratio", view, latency.cache_hit_ratio)
    for reason, requests in latency.finished:
        gauge("spectop_server_finished_requests", view, requests, reason=reason)
