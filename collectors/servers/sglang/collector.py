"""SGLang: poll /health, /v1/loads and (with --enable-metrics) /metrics, and once /server_info.

Pitfalls handled (collectors/docs/servers.md, SGLang): acceptance and accepted length are gauges
over the last 40 decode iterations, with no live counter pair, so a `SglangSnapshot`
(sglang_snapshot.py) carries them and leaves drafted/accepted counts None; its acceptance is
derived from the accept length and the verified width, since `spec_accept_rate` changed meaning
in 0.5.11 (sglang_accept.py);
the tokenizer's token and verify counters move only when a request finishes, so live tokens/s
comes from `realtime_tokens_total{mode="decode"}`; scheduler series repeat per tp_rank under
--enable-metrics-for-all-schedulers (never summed across tp_rank), carry the total under
priority="" with priority scheduling, and are summed over dp_rank; /v1/loads counts running and
waiting requests live, with or without --enable-metrics. A sweep window is bracketed by what
SGLang counts: finished requests' generated tokens and verify calls; drafted and accepted counts
and requests per step have no counter, so they stay None there. The context length is /v1/models'
`max_model_len` or the `sglang:context_len` gauge (server_info's `context_length` is the
--context-length argument, None by default); /health answers 503 while starting and also while
shutting down or unhealthy; /server_info is read again every `IDENTITY_POLLS` polls, else its
`startup_time` could never show a restart that the counters missed (no --enable-metrics).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from collectors.errors import SpectopError
from collectors.http import gather_reads
from collectors.servers import engine_state, series
from collectors.servers.answers import json_body, json_with, model_owner
from collectors.servers.base import (
    Probe,
    ServerCollector,
    WindowCounters,
    brackets_window,
    per_second,
    poll_fields,
)
from collectors.servers.base import (
    RawPoll as BaseRawPoll,
)
from collectors.servers.sglang import accept as sglang_accept
from collectors.servers.sglang import latency as sglang_latency
from collectors.servers.sglang import pages as sglang_json
from collectors.servers.sglang.advice import SglangAdvice
from collectors.servers.sglang.schedule import SglangSchedule
from collectors.servers.sglang.snapshot import SglangSnapshot
from collectors.servers.sglang.stream import SglangWire
from collectors.servers.shapes import INT, member, objects
from collectors.servers.snapshot import ServerSnapshot

BACKEND = "sglang"
PREFIX = "sglang:"
COPIES = ("tp_rank", "pp_rank", "moe_ep_rank")  # labels whose values repeat one scheduler's figure
REALTIME = "sglang:realtime_tokens_total"
GENERATED = "sglang:generation_tokens_total"
VERIFY_CALLS = "sglang:spec_verify_calls_total"
COUNTERS = (REALTIME, GENERATED, VERIFY_CALLS, "sglang:prompt_tokens_total")
CONTEXT_LEN = "sglang:context_len"  # observability/metrics_collector.py (0.5.23): "Maximum context length."
NO_METRICS = "not available: start SGLang with --enable-metrics"
NOT_READY = "the server is starting, shutting down or unhealthy (/health answered 503)"


def _total_only(labels: Mapping[str, str]) -> bool:
    return labels.get("priority", "") == ""


def _decode(labels: Mapping[str, str]) -> bool:
    return labels.get("mode") == "decode" and _total_only(labels)


@dataclass
class RawPoll(BaseRawPoll):
    """SGLang's /v1/loads and /metrics at one instant, with what /server_info said once."""

    loads: list[dict[str, Any]] | None = None
    loads_status: str = "ok"
    info: dict[str, Any] | None = None  # /server_info: server args, internal_states, version
    models: list[dict[str, Any]] | None = None  # /v1/models `data`: max_model_len

    def scheduler(self, name: str, keep: series.Keep = _total_only) -> dict[series.Key, float]:
        return series.series(self.metrics, name, keep, COPIES)

    def scheduler_total(self, name: str) -> float | None:
        rows = self.scheduler(name)
        return sum(rows.values()) if rows else None

    def loads_total(self, key: str) -> float | None:
        return sglang_json.loads_total(self.loads, key)


def weighted_gauge(raw: RawPoll, name: str) -> float | None:
    """One figure from per-DP-rank gauges, each weighted by its rank's running requests."""
    gauges = {dict(k).get("dp_rank", ""): v for k, v in raw.scheduler(name).items()}
    if not gauges:
        return None
    running = {dict(k).get("dp_rank", ""): v for k, v in raw.scheduler("sglang:num_running_reqs").items()}
    weights = {rank: running.get(rank, 0.0) for rank in gauges}
    if sum(weights.values()) <= 0:
        return sum(gauges.values()) / len(gauges)
    return sum(gauges[r] * w for r, w in weights.items()) / sum(weights.values())


def drafting(raw: RawPoll) -> bool | None:
    """The speculative algorithm in /server_info, else any sign of spec activity."""
    if raw.info is not None and "speculative_algorithm" in raw.info:
        return bool(raw.info["speculative_algorithm"])
    if any(sglang_json.spec_section(load) for load in raw.loads or []):  # a section only spec servers fill
        return True
    if (series.total(raw.metrics, VERIFY_CALLS) or 0) > 0 or (
        weighted_gauge(raw, "sglang:spec_accept_length") or 0
    ) > 0:
        return True
    return None


def _width(raw: RawPoll) -> int | None:
    live = weighted_gauge(raw, "sglang:spec_num_draft_tokens")  # moves under --speculative-adaptive
    return series.as_int(live) if live else sglang_json.int_field(raw.info, "speculative_num_draft_tokens")


def context_len(raw: RawPoll) -> int | None:
    """/v1/models' `max_model_len` (model_config.context_len), else the `sglang:context_len` gauge."""
    first = (raw.models or [{}])[0]
    value = first.get("max_model_len") if isinstance(first, dict) else None
    if isinstance(value, int) and INT.test(value) and value > 0:
        return value
    gauges = raw.scheduler(CONTEXT_LEN).values()
    return series.as_int(max(gauges)) if gauges else None


def derive(prev: RawPoll | None, cur: RawPoll, url: str) -> SglangSnapshot:
    """A snapshot from the current poll, with window figures when a previous poll exists."""
    running = cur.loads_total("num_running_reqs")
    waiting = cur.loads_total("num_waiting_reqs")
    running = running if running is not None else cur.scheduler_total("sglang:num_running_reqs")
    waiting = waiting if waiting is not None else cur.scheduler_total("sglang:num_queue_reqs")
    length_gauge = weighted_gauge(cur, "sglang:spec_accept_length")
    window_done = length_gauge is not None and length_gauge >= 1.0  # 0 until the first 40 iterations
    rate = (
        weighted_gauge(cur, "sglang:spec_accept_rate")
        if window_done
        else sglang_json.loads_spec(cur.loads, "accept_rate")
    )
    width = _width(cur)
    # the rate's meaning changed in 0.5.11: acceptance is derived (sglang_accept.py)
    accepted_share = sglang_accept.acceptance(rate, length_gauge if window_done else None, width, cur.info)
    base: dict[str, Any] = dict(
        **poll_fields(url, BACKEND, cur),
        model=sglang_json.str_field(cur.info, "served_model_name", "model_path")
        or series.label_value(cur.metrics, PREFIX, "model_name"),
        build=sglang_json.str_field(cur.info, "version"),
        slots_total=sglang_json.slots_total(cur.loads, cur.info),
        slots_busy=series.as_int(running),
        n_ctx_slot=context_len(cur),
        drafting=drafting(cur),
        spec_types=sglang_json.spec_types(cur.info),
        draft_tokens=sglang_accept.steps(cur.info),  # what --speculative-num-steps sets
        requests_processing=series.as_int(running),
        requests_deferred=series.as_int(waiting),
        tokens_predicted_total=series.as_int(series.total(cur.metrics, GENERATED)),
        steps_total=series.as_int(series.total(cur.metrics, VERIFY_CALLS)),
        **engine_state.sglang(cur.metrics),
        latency_counters=sglang_latency.read(cur.metrics),
        metrics_status=cur.metrics_status,
        slots_status=cur.loads_status,
        accept_rate_gauge=accepted_share,
        accept_length_gauge=length_gauge if window_done else None,
        accept_length_lifetime=sglang_json.lifetime_accept_length(cur.loads, cur.info),
        verify_width_tokens=width,
    )
    # a restart shows in /server_info's startup_time too, so it is checked without /metrics
    if prev is None or not brackets_window(prev, cur, needs_metrics=False):
        return SglangSnapshot(**base)
    if restarted(prev, cur):
        return SglangSnapshot(**base, restarted=True)
    if not brackets_window(prev, cur):
        return SglangSnapshot(**base)
    window_s = cur.t_s - prev.t_s
    tokens = series.delta(prev.metrics, cur.metrics, REALTIME, _decode, COPIES)
    if tokens is None:  # older servers: finished requests only
        tokens = series.delta(prev.metrics, cur.metrics, GENERATED)
    return SglangSnapshot(
        **base,
        window_s=window_s,
        window_tokens=series.as_int(tokens),
        live_tok_s=per_second(tokens, window_s),
        live_tok_s_exact=False,  # decode tokens only: each request's first token comes from prefill
        window_steps=series.as_int(series.delta(prev.metrics, cur.metrics, VERIFY_CALLS)),
    )


def restarted(prev: RawPoll, cur: RawPoll) -> bool:
    """Any counter series going backwards (SGLang runs multiprocess mode: no `_created` stamps)."""
    if any(series.went_back(prev.metrics, cur.metrics, [n], _total_only, COPIES) for n in COUNTERS):
        return True
    a, b = (prev.info or {}).get("startup_time"), (cur.info or {}).get("startup_time")
    # a NaN stamp (JSON from Python) differs from itself: it stamps nothing, else every poll restarts
    return a is not None and b is not None and a == a and b == b and a != b


def counters(raw: RawPoll) -> WindowCounters | None:
    """Tokenizer counters of one poll (they move when a request finishes); None without /metrics."""
    if raw.metrics is None:
        return None
    return WindowCounters(
        tokens=series.total(raw.metrics, GENERATED), steps=series.total(raw.metrics, VERIFY_CALLS)
    )


class SglangCollector(SglangWire, SglangAdvice, SglangSchedule, ServerCollector):
    """Polls one SGLang server; keeps the previous poll so each snapshot has a window."""

    backend = BACKEND
    display_name = "SGLang"
    start_hint = "start SGLang there (python -m sglang.launch_server)"
    load_endpoint = "/v1/loads"
    # /generate: every release's verify passes in the last meta_info; chat's sglext only recent ones
    default_route = "completion"
    # with --enable-metrics: finished requests' tokens and verify calls only (acceptance is a gauge)
    has_window_counters = True
    read_buckets = sglang_latency.BUCKETS  # the latency histograms (sglang/latency.py)
    http_hints = {
        ("/metrics", 404): NO_METRICS,
        ("/v1/loads", 404): "not available: /v1/loads needs SGLang 0.5.8 or newer",
    }

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        """/server_info (/get_server_info only before 0.5.6) has its spec args and `internal_states`;
        else /v1/models says `owned_by: sglang`; else /metrics has `sglang:` series."""
        info = await probe.get("/server_info")
        if info.status_code == 404:
            info = await probe.get("/get_server_info")
        if json_with(info, "speculative_algorithm", "internal_states"):
            return True
        if model_owner(await probe.get("/v1/models")) == BACKEND:
            return True
        metrics = await probe.get("/metrics")
        return metrics.status_code == 200 and PREFIX in metrics.text

    async def _identify(self) -> dict[str, Any]:
        info, models = await gather_reads(self._server_info(), self.get("/v1/models"))
        data = member(json_body(models), "data")
        return dict(info=info, models=objects(data) if isinstance(data, list) else None)

    async def _server_info(self) -> dict[str, Any] | None:
        for path in ("/server_info", "/get_server_info"):  # the second is the only one before 0.5.6
            body = json_body(await self.get(path))
            if isinstance(body, dict):
                return body
        return None

    async def fetch(self) -> RawPoll:
        """One raw poll; /server_info and /v1/models are read on the first poll, after a restart
        and every `IDENTITY_POLLS` polls."""
        t_s = time.monotonic()
        try:
            health, loads, metrics = await self.get_all("/health", "/v1/loads", "/metrics")
            if self.identity_due():
                self._identity = await self._identify()
        except httpx.HTTPError as exc:
            return RawPoll(t_s, **self.failed(exc))
        raw = RawPoll(t_s, info=self._identity["info"], models=self._identity["models"])
        if health.status_code == 503:
            raw.status, raw.error = "loading", NOT_READY
        elif health.status_code != 200:
            raw.status, raw.error = "error", f"/health answered HTTP {health.status_code}"
        body = json_body(loads)
        ranks = (body.get("loads") or []) if isinstance(body, dict) else None
        raw.loads = objects(ranks) if isinstance(ranks, list) else None
        raw.loads_status = "ok" if raw.loads is not None else self.http_problem(loads, "/v1/loads")
        if loads.status_code == 200 and raw.loads is None:
            raw.loads_status = "unreadable: not a list of `loads`"
        if metrics.status_code != 200:
            raw.metrics_status = self.http_problem(metrics, "/metrics")
        else:
            raw.metrics, raw.metrics_status = self.read_metrics(metrics)
        return raw

    def derive(self, prev: RawPoll | None, raw: RawPoll) -> ServerSnapshot:
        return derive(prev, raw, self.url)

    async def busy_slots(self) -> int | None:
        """Requests running right now, from /v1/loads (live), else /metrics; None when neither says."""
        try:
            loads = await self.get("/v1/loads", params={"include": "core"})
        except (httpx.HTTPError, SpectopError):
            return None
        ranks = member(json_body(loads), "loads")
        if isinstance(ranks, list):
            return series.as_int(sglang_json.loads_total(objects(ranks), "num_running_reqs")) or 0
        raw = RawPoll(0.0, metrics=await self.scrape())
        return series.as_int(raw.scheduler_total("sglang:num_running_reqs"))

    async def window_counters(self) -> WindowCounters | None:
        """Finished requests' tokens and verify calls now; None without --enable-metrics."""
        return counters(RawPoll(time.monotonic(), metrics=await self.scrape()))
