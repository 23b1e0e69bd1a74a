"""vLLM (V1 engine): poll /health and /metrics, and once /version, /v1/models and /server_info.

Pitfalls handled (collectors/docs/servers.md, vLLM): engine series carry `engine` (one per DP rank) and
`model_name` labels, so counters are summed over label sets before any ratio; they move on every engine
step, so the window needs no per-request bookkeeping; a restart shows as a new `*_created` stamp or
(multiprocess mode) a counter going backwards; spec series exist only with a spec config.
`--disable-log-stats` removes the engine series but not every `vllm:` series (a tool-call parser's and
the realtime task's are registered whatever that flag says), so "stats on" is read from `ENGINE_SERIES`,
and without them drafting is unknown, not "drafts nothing". A sweep window's requests per step is the
sum over engines, which step on their own; DP's slots, API servers and multiprocess pages are
`vllm_dp`'s, V0's counters `vllm_v0`'s, KV use, sleep `engine_state`'s. `spec_decode_num_drafts_total`
counts only (request, step) pairs that had draft tokens (`scheduler.py` `update_from_output`), so the
window's steps are the step-latency histogram's observations, one per request per engine step after its
first token. Without spec series: drafted and accepted are 0.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from collectors.http import gather_reads
from collectors.servers import engine_state, series
from collectors.servers.answers import json_body, model_owner
from collectors.servers.base import (
    Probe,
    ServerCollector,
    WindowCounters,
    brackets_window,
    per_second,
    poll_fields,
    position_deltas,
)
from collectors.servers.base import RawPoll as BaseRawPoll
from collectors.servers.shapes import INT, member
from collectors.servers.snapshot import ServerSnapshot
from collectors.servers.vllm import dp as vllm_dp
from collectors.servers.vllm import latency as vllm_latency
from collectors.servers.vllm import v0 as vllm_v0
from collectors.servers.vllm.advice import VllmAdvice
from collectors.servers.vllm.schedule import VllmSchedule
from collectors.servers.vllm.stream import VllmWire

BACKEND = "vllm"
PREFIX = "vllm:"
GENERATED = "vllm:generation_tokens_total"
DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
STEPS_HISTOGRAM = vllm_dp.STEPS_HISTOGRAM
# one observation per request per engine step after its first; the older name went away by 0.27
STEP_LATENCY = ("vllm:inter_token_latency_seconds_count", "vllm:time_per_output_token_seconds_count")
COUNTERS = (GENERATED, DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POSITION, "vllm:prompt_tokens_total")
# engine series every V1 (and V0) server registers unless --disable-log-stats
ENGINE_SERIES = (RUNNING, GENERATED, STEPS_HISTOGRAM, *STEP_LATENCY)
SLOTS_UNKNOWN = "unknown: vLLM reports running requests on /metrics only"
UNHEALTHY = "the engine is not healthy"
STATS_OFF = "engine stats off (--disable-log-stats): drafting unknown; restart vLLM without that flag"


@dataclass
class RawPoll(BaseRawPoll):
    """vLLM's /metrics at one instant, with what /version, /v1/models and /server_info said once."""

    version: str | None = None
    models: list[dict[str, Any]] | None = None
    config: dict[str, Any] | None = None  # /server_info's vllm_config, dev mode only

    def total(self, name: str) -> float | None:
        return series.total(self.metrics, name)

    def spec_total(self, name: str) -> float | None:
        """A spec counter summed over engines; 0 on a server that does not draft (no spec series)."""
        return 0.0 if drafting(self) is False else self.total(name)

    def steps(self) -> float | None:
        """Every decode step after each request's first token, summed over engines."""
        name = self.step_latency_name()
        return self.total(name) if name else None

    def step_latency_name(self) -> str | None:
        return next((n for n in STEP_LATENCY if self.metrics and n in self.metrics), None)

    def per_position(self) -> tuple[int, ...]:
        rows = series.by_label(self.metrics, PER_POSITION, "position", keep=_has_position)
        counts = [series.as_int(rows[p]) for p in sorted(rows, key=int)]
        return tuple(c for c in counts if c is not None)

    def spec_config(self) -> dict[str, Any] | None:
        spec = (self.config or {}).get("speculative_config")
        return spec if isinstance(spec, dict) else None


def _has_position(labels: Mapping[str, str]) -> bool:
    return series.position_of(labels) is not None and "position" in labels


def stats_on(raw: RawPoll) -> bool:
    """The engine's own series are on the page (not only a parser's or a websocket's `vllm:` series)."""
    return raw.metrics is not None and any(n in raw.metrics for n in ENGINE_SERIES)


def drafting(raw: RawPoll) -> bool | None:
    """Spec series present (they are registered only with a speculative config), else the config."""
    if raw.metrics is not None and stats_on(raw):
        return any(n in raw.metrics for n in (DRAFTS, DRAFT_TOKENS, ACCEPTED, *vllm_v0.SPEC_GAUGES))
    if raw.config is not None:
        return raw.spec_config() is not None
    return None


def spec_types(raw: RawPoll) -> str | None:
    """The method and k from the config, else k from the per-position series."""
    spec, k = raw.spec_config() or {}, draft_length(raw)
    parts = [str(spec["method"])] if spec.get("method") else []
    return " ".join(parts + ([f"k={k}"] if k else [])) or None


def draft_length(raw: RawPoll) -> int | None:
    """num_speculative_tokens from the config, else the per-position series' length (one per position)."""
    k = (raw.spec_config() or {}).get("num_speculative_tokens") or len(raw.per_position()) or None
    return k if isinstance(k, int) and k > 0 else None


def restarted(prev: RawPoll, cur: RawPoll) -> bool:
    """A changed `_created` or process start stamp, or any counter series going backwards."""
    return series.stamps_changed(prev.metrics, cur.metrics, PREFIX) or series.went_back(
        prev.metrics, cur.metrics, COUNTERS
    )


def _model(raw: RawPoll) -> str | None:
    named = series.label_value(raw.metrics, PREFIX, "model_name")
    if named:
        return named
    first = (raw.models or [{}])[0]
    model = first.get("id") if isinstance(first, dict) else None
    return model if isinstance(model, str) and model else None


def _max_model_len(raw: RawPoll) -> int | None:
    first = (raw.models or [{}])[0]
    value = first.get("max_model_len") if isinstance(first, dict) else None
    if value is None:
        value = member(raw.config, "model_config", "max_model_len")
    return value if INT.test(value) else None


def derive(prev: RawPoll | None, cur: RawPoll, url: str) -> ServerSnapshot:
    """A snapshot from the current poll, with window figures when a previous poll exists."""
    running = series.as_int(vllm_dp.gauge_total(cur.metrics, RUNNING))
    base: dict[str, Any] = dict(
        **poll_fields(url, BACKEND, cur),
        model=_model(cur),
        build=cur.version,
        slots_total=vllm_dp.slots_total(cur.config, cur.metrics, STEPS_HISTOGRAM),
        slots_busy=running,
        n_ctx_slot=_max_model_len(cur),
        drafting=drafting(cur),
        spec_types=spec_types(cur),
        draft_tokens=draft_length(cur),
        requests_processing=running,
        requests_deferred=series.as_int(vllm_dp.gauge_total(cur.metrics, WAITING)),
        tokens_predicted_total=series.as_int(cur.total(GENERATED)),
        drafted_total=series.as_int(cur.spec_total(DRAFT_TOKENS)),
        accepted_total=series.as_int(cur.spec_total(ACCEPTED)),
        steps_total=series.as_int(cur.steps()),
        drafted_steps_total=series.as_int(cur.spec_total(DRAFTS)),
        per_position_total=cur.per_position(),
        **engine_state.vllm(cur.metrics),
        latency_counters=vllm_latency.read(cur.metrics),
        metrics_status=cur.metrics_status,
        slots_status="ok" if running is not None else SLOTS_UNKNOWN,
    )
    if prev is None or not brackets_window(prev, cur):
        return _snapshot(base, {}, cur)
    if restarted(prev, cur):
        return _snapshot(base, {"restarted": True}, cur)
    window_s = cur.t_s - prev.t_s

    def grew(name: str | None) -> int | None:
        return series.as_int(series.delta(prev.metrics, cur.metrics, name)) if name else None

    def spec_grew(name: str) -> int | None:
        return 0 if drafting(cur) is False else grew(name)

    tokens = grew(GENERATED)
    window: dict[str, Any] = dict(
        window_s=window_s,
        window_tokens=tokens,
        live_tok_s=per_second(tokens, window_s),
        live_tok_s_exact=tokens is not None,  # the counter includes running requests' tokens
        window_drafted=spec_grew(DRAFT_TOKENS),
        window_accepted=spec_grew(ACCEPTED),
        window_steps=grew(cur.step_latency_name()),
        window_drafted_steps=spec_grew(DRAFTS),
        busy_slots_per_decode=vllm_dp.requests_per_step(
            prev.metrics, cur.metrics, cur.config, cur.step_latency_name()
        ),
    )
    if cur.per_position():
        window["window_per_position"] = position_deltas(prev.per_position(), cur.per_position())
    return _snapshot(base, window, cur)


def _snapshot(base: dict[str, Any], window: dict[str, Any], cur: RawPoll) -> ServerSnapshot:
    """The snapshot; a V0 drafting page's without the counts V0 cannot give (vllm_v0.py)."""
    if cur.metrics is not None and vllm_v0.drafts_v0(cur.metrics):
        return vllm_v0.snapshot(base, window, cur.metrics)
    return ServerSnapshot(**base, **window)


def counters(raw: RawPoll) -> WindowCounters | None:
    """The engine counters of one poll, summed over engines; None without engine series."""
    if not stats_on(raw):
        return None
    if vllm_v0.drafts_v0(raw.metrics):  # V0's spec counters add up running totals: no window counts
        return WindowCounters()
    engines = len(series.series(raw.metrics, STEPS_HISTOGRAM))
    steps = vllm_dp.steps(raw.config, raw.total(STEPS_HISTOGRAM), raw.metrics)
    return WindowCounters(
        tokens=raw.total(GENERATED),  # every emitted token, counted each engine step
        drafted=raw.spec_total(DRAFT_TOKENS),
        accepted=raw.spec_total(ACCEPTED),
        steps=raw.steps(),
        drafted_steps=raw.spec_total(DRAFTS),
        request_steps=raw.steps(),
        # steps per engine: requests per step then adds up over engines that step in parallel
        decode_steps=steps / engines if steps is not None and engines else None,
    )


class VllmCollector(VllmWire, VllmAdvice, VllmSchedule, ServerCollector):
    """Polls one vLLM server (its load is gauges on /metrics: no load endpoint), keeping each poll for a window."""

    backend = BACKEND
    display_name = "vLLM"
    start_hint = "start vLLM there (vllm serve MODEL)"
    has_window_counters = True  # unless --disable-log-stats
    read_buckets = vllm_latency.BUCKETS  # the latency histograms (vllm/latency.py)
    http_hints = {("/metrics", 404): "not found (HTTP 404): is --server the vLLM API server's port?"}

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        """/v1/models says `owned_by: vllm`, else /metrics has `vllm:` series (unless --disable-log-stats)."""
        if model_owner(await probe.get("/v1/models")) == BACKEND:
            return True
        metrics = await probe.get("/metrics")
        return metrics.status_code == 200 and PREFIX in metrics.text

    async def fetch(self) -> RawPoll:
        """One raw poll; the identity endpoints are read on the first poll and after a restart."""
        t_s = time.monotonic()
        get = self.get
        try:
            health, metrics = await self.get_all("/health", "/metrics")
            if self._identity is None:
                version, models, info = await gather_reads(
                    get("/version"), get("/v1/models"), get("/server_info", params={"config_format": "json"})
                )
                self._identity = dict(
                    version=member(json_body(version), "version"),
                    models=member(json_body(models), "data"),
                    config=member(json_body(info), "vllm_config"),
                )
        except httpx.HTTPError as exc:
            return RawPoll(t_s, **self.failed(exc))
        raw = RawPoll(t_s)
        identity = self._identity
        raw.version = identity["version"] if isinstance(identity["version"], str) else None
        raw.models = identity["models"] if isinstance(identity["models"], list) else None
        raw.config = identity["config"] if isinstance(identity["config"], dict) else None
        if health.status_code != 200:
            raw.status, raw.error = "error", f"/health answered HTTP {health.status_code}: {UNHEALTHY}"
        if metrics.status_code != 200:
            raw.metrics_status = self.http_problem(metrics, "/metrics")
            return raw
        raw.metrics, raw.metrics_status = self.read_metrics(metrics)
        if raw.metrics is None:
            return raw
        if not stats_on(raw):
            raw.metrics_status = STATS_OFF
        return raw

    def derive(self, prev: RawPoll | None, raw: RawPoll) -> ServerSnapshot:
        return derive(prev, raw, self.url)

    async def busy_slots(self) -> int | None:
        """Requests running right now (summed over engines); None when /metrics does not say."""
        return series.as_int(vllm_dp.gauge_total(await self.scrape(), RUNNING))

    async def window_counters(self) -> WindowCounters | None:
        """The engine counters now; None when /metrics is unreadable or has no engine series."""
        config = member(self._identity, "config")
        raw = RawPoll(
            time.monotonic(), metrics=await self.scrape(), config=config if isinstance(config, dict) else None
        )
        return counters(raw)
