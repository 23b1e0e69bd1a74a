"""llama-server: poll /health, /props, /slots and /metrics into a ServerSnapshot.

Pitfalls handled (collectors/docs/servers.md, llama-server): token and speculative counters only move when a
request finishes, so live tokens/s comes from the slots' `n_decoded` (llamacpp_slots.py);
`spec_decode_num_drafts_total` counts only steps that drafted (under `--spec-draft-p-min` some
draft nothing, under ngram-simple it barely moves), so the window's steps are every step of the
requests that finished, T − R − A, with R counted from /slots; a request finishing while /slots
and /metrics are read would be counted in one window and its tokens in another, so /metrics is
read again after /slots and a disagreement marks the count uncertain; doubles are printed with
6 significant digits, so counters past 10⁶ are rounded (rounding.py); `n_busy_slots_per_decode`
is a cumulative average, so the window's value is re-derived from two scrapes; `/props` (read once per
server start, and every ten polls in case a restart went unseen) always
says `speculative.types: none`, so drafting is read from `/slots`; /metrics (501 without
--metrics) and /slots (501 with --no-slots) may be off, and each says how to turn it on. /props
and /slots are checked against the shapes read here (`PROPS`, `SLOTS`) before anything reads them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from collectors import promtext
from collectors.energy import ledger
from collectors.errors import SpectopError
from collectors.servers import rounding
from collectors.servers.answers import json_with
from collectors.servers.base import (
    Probe,
    ServerCollector,
    WindowCounters,
    WindowDelta,
    brackets_window,
    per_second,
    poll_fields,
    position_deltas,
    window_delta,
)
from collectors.servers.base import (
    RawPoll as BaseRawPoll,
)
from collectors.servers.llamacpp import latency as llamacpp_latency
from collectors.servers.llamacpp.advice import LlamaCppAdvice
from collectors.servers.llamacpp.schedule import LlamaCppSchedule
from collectors.servers.llamacpp.slots import SlotState, finished_requests, generated_tokens, slot_states
from collectors.servers.llamacpp.stream import LlamaCppWire
from collectors.servers.series import as_int, position_of
from collectors.servers.shapes import INT, TEXT, ListOf, OneOf, Required, json_of
from collectors.servers.snapshot import ServerSnapshot

BACKEND = "llama.cpp"
_P = "llamacpp:"
_PER_POSITION = _P + "spec_decode_num_accepted_tokens_per_pos_total"
_AT_FINISH = (
    "tokens_predicted_total",
    "tokens_predicted_seconds_total",
    "spec_decode_num_draft_tokens_total",
    "spec_decode_num_accepted_tokens_total",
)
# the fields read here and their kinds; a server that sends another kind is not llama-server
PROPS = {
    "model_alias": TEXT,
    "model_path": TEXT,
    "build_info": TEXT,
    "total_slots": INT,
    "default_generation_settings": {"n_ctx": INT},
}
_DECODED = {"n_decoded": INT}
SLOTS = ListOf(
    {
        "id": Required(INT),
        "id_task": INT,
        "n_ctx": INT,
        "params": {"speculative.types": TEXT},
        "next_token": OneOf((ListOf(_DECODED), _DECODED)),  # older builds sent one object
    }
)


@dataclass
class RawPoll(BaseRawPoll):
    """llama-server's /props, /slots and /metrics at one instant."""

    props: dict[str, Any] | None = None
    slots: list[dict[str, Any]] | None = None
    slots_status: str = "ok"
    process_start: str | None = None
    reads_agree: bool = True  # False: a request finished between the /slots and /metrics reads
    extra: dict[str, Any] = field(default_factory=dict)

    def metric(self, name: str) -> float | None:
        return promtext.scalar(self.metrics, _P + name) if self.metrics else None

    def per_position(self) -> tuple[int, ...]:
        rows = (self.metrics or {}).get(_PER_POSITION, [])
        ordered = sorted((p, s.value) for s in rows if (p := position_of(s.labels)) is not None)
        return tuple(int(value) for _, value in ordered)

    def slot_states(self) -> dict[int, SlotState] | None:
        return slot_states(self.slots) if self.slots is not None else None


def finished_counts(metrics: dict[str, list[promtext.Sample]]) -> tuple[float | None, ...]:
    """The counters that move when a request finishes: equal in two reads, none finished between."""
    return tuple(promtext.scalar(metrics, _P + name) for name in _AT_FINISH)


def restarted(prev: RawPoll, cur: RawPoll) -> bool:
    """A new process start stamp, or any counter going backwards."""
    if prev.process_start and cur.process_start and prev.process_start != cur.process_start:
        return True
    for name in ("tokens_predicted_total", "n_decode_total", "spec_decode_num_draft_tokens_total"):
        a, b = prev.metric(name), cur.metric(name)
        if a is not None and b is not None and b < a:
            return True
    return False


def derive(prev: RawPoll | None, cur: RawPoll, url: str) -> ServerSnapshot:
    """A snapshot from the current poll, with window figures when a previous poll exists."""
    props = cur.props or {}
    states = cur.slot_states() or {}
    first_slot = (cur.slots or [{}])[0] if cur.slots else {}
    # only slots that have run a task carry params
    params: dict[str, Any] = next((s["params"] for s in cur.slots or [] if s.get("params")), {})
    spec_types = params.get("speculative.types")
    now = counters(cur)
    base: dict[str, Any] = dict(
        **poll_fields(url, BACKEND, cur),
        model=props.get("model_alias") or props.get("model_path"),
        build=props.get("build_info"),
        slots_total=props.get("total_slots") or (len(states) if cur.slots is not None else None),
        slots_busy=sum(s.busy for s in states.values()) if cur.slots is not None else None,
        busy_slot_tokens=tuple((s.slot_id, s.n_decoded) for s in states.values() if s.busy),
        n_ctx_slot=first_slot.get("n_ctx") or (props.get("default_generation_settings") or {}).get("n_ctx"),
        drafting=bool(first_slot.get("speculative")) if cur.slots else None,
        spec_types=spec_types,
        requests_processing=as_int(cur.metric("requests_processing")),
        requests_deferred=as_int(cur.metric("requests_deferred")),
        tokens_predicted_total=as_int(now.tokens),
        drafted_total=as_int(now.drafted),
        accepted_total=as_int(now.accepted),
        drafted_steps_total=as_int(now.drafted_steps),
        per_position_total=cur.per_position(),
        counters_rounded=any(now.errors.get(n, 0.0) > 0 for n in ("tokens", "drafted", "accepted")),
        latency_counters=llamacpp_latency.read(cur.metrics),
        metrics_status=cur.metrics_status,
        slots_status=cur.slots_status,
    )
    if prev is None or not brackets_window(prev, cur, needs_metrics=False):
        return ServerSnapshot(**base)
    if restarted(prev, cur):
        return ServerSnapshot(**base, restarted=True)
    window_s = cur.t_s - prev.t_s
    delta = window_delta(counters(prev), now)
    before, after = prev.slot_states(), cur.slot_states()
    finished, finished_exact = finished_requests(before, after)
    # the finished part is ± the counter's rounding: then the count is not exact either
    tokens, exact = generated_tokens(before, after, delta.tokens, not delta.rounded)
    base["counters_rounded"] = delta.rounded
    window: dict[str, Any] = dict(
        window_s=window_s,
        window_tokens=tokens,
        live_tok_s=per_second(tokens, window_s),
        live_tok_s_exact=exact,
        window_drafted=delta.drafted,
        window_accepted=delta.accepted,
        window_drafted_steps=delta.drafted_steps,
        window_steps=every_step_count(delta, finished),
        window_finished=finished,
        window_steps_exact=finished_exact and prev.reads_agree and cur.reads_agree,
        busy_slots_per_decode=delta.busy_per_decode,
    )
    if cur.per_position():
        window["window_per_position"] = position_deltas(prev.per_position(), cur.per_position())
    return ServerSnapshot(**base, **window)


def every_step_count(delta: WindowDelta, finished: int | None) -> int | None:
    """Steps of the requests that finished in the window, every step counted: T − R − A.

    None when a part is unknown, when rounding could move it by more than 5 %, or when it is
    fewer than the steps that drafted (the reads disagree: a request finished between them).
    """
    if finished is None or delta.tokens is None or delta.accepted is None:
        return None
    steps = ledger.every_step_count(delta.tokens, delta.accepted, finished)
    error = delta.errors.get("tokens", 0.0) + delta.errors.get("accepted", 0.0)
    if steps < (delta.drafted_steps or 0) or steps < 0 or not rounding.trusted(steps, error):
        return None
    return steps


def counters(raw: RawPoll) -> WindowCounters:
    """The cumulative counters of one poll (None where /metrics is off or lacks them).

    Every step is not among them: it needs the requests that finished (/slots), see `derive`.
    """
    n_decode = raw.metric("n_decode_total")
    busy_mean = raw.metric("n_busy_slots_per_decode")  # Σ busy / n_decode since start
    values = dict(
        tokens=raw.metric("tokens_predicted_total"),
        drafted=raw.metric("spec_decode_num_draft_tokens_total"),
        accepted=raw.metric("spec_decode_num_accepted_tokens_total"),
        drafted_steps=raw.metric("spec_decode_num_drafts_total"),
        decode_steps=n_decode,
    )
    errors = {name: rounding.read_error(v, rounding.LLAMA_DIGITS) for name, v in values.items()}
    request_steps = None
    if busy_mean is not None and n_decode is not None:
        # undo the running average: Σ busy over all decodes, whose delta gives the window's mean
        request_steps = busy_mean * n_decode
        mean_error = rounding.read_error(busy_mean, rounding.LLAMA_DIGITS)
        errors["request_steps"] = busy_mean * errors["decode_steps"] + n_decode * mean_error
    return WindowCounters(**values, request_steps=request_steps, errors=errors)


class LlamaCppCollector(LlamaCppWire, LlamaCppAdvice, LlamaCppSchedule, ServerCollector):
    """Polls one llama-server; keeps the previous poll so each snapshot has a window."""

    backend = BACKEND
    display_name = "llama-server"
    start_hint = "start llama-server there"
    default_route = "completion"  # the native route: exact token counts and timings on every event
    load_endpoint = "/slots"
    has_window_counters = True  # with --metrics; they count a request when it finishes
    http_hints = {
        ("/metrics", 501): "not available: start the server with --metrics",
        ("/slots", 501): "not available: the server was started with --no-slots",
    }

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        """/props has `build_info` and `total_slots`."""
        return json_with(await probe.get("/props"), "total_slots", "build_info")

    async def fetch(self) -> RawPoll:
        """One raw poll of /slots and /metrics concurrently, then /metrics once more (see
        `reads_agree`); /health only when /slots did not answer 200 (the server answers every other
        endpoint 503 until its model is loaded, so a /slots answer says it is up); /props (model,
        build, slots: fixed for a server's life, and its chat template makes it the largest answer)
        on the first poll, after a failure or restart and every `IDENTITY_POLLS` polls. Never
        raises for HTTP trouble."""
        t_s = time.monotonic()
        get = self.get
        try:
            slots, metrics, *props = await self.get_all(
                "/slots", "/metrics", *(("/props",) if self.identity_due() else ())
            )
            health = await get("/health") if slots.status_code != 200 else None
            again = await get("/metrics") if metrics.status_code == 200 else metrics
        except httpx.HTTPError as exc:
            return RawPoll(t_s, **self.failed(exc))
        if props and props[0].status_code == 200:
            self._identity = json_of(props[0], "/props", PROPS)
        raw = RawPoll(t_s, props=self._identity)
        if health is not None and health.status_code == 503:
            raw.status, raw.error = "loading", "the server is loading its model"
        elif health is not None and health.status_code != 200:
            raw.status, raw.error = "error", f"/health answered HTTP {health.status_code}"
        if slots.status_code == 200:
            raw.slots = json_of(slots, "/slots", SLOTS)
        else:
            raw.slots_status = self.http_problem(slots, "/slots")
        if metrics.status_code == 200:
            first, raw.metrics_status = self.read_metrics(metrics)
            raw.metrics = first
            if again.status_code == 200 and again.content != metrics.content:
                raw.metrics, raw.metrics_status = self.read_metrics(again)
            raw.process_start = metrics.headers.get("Process-Start-Time-Unix")
            # a request that finished between the two reads may be done in one and not the other
            raw.reads_agree = (
                again.status_code == 200
                and first is not None
                and raw.metrics is not None
                and finished_counts(first) == finished_counts(raw.metrics)
            )
        else:
            raw.metrics_status = self.http_problem(metrics, "/metrics")
        return raw

    def derive(self, prev: RawPoll | None, raw: RawPoll) -> ServerSnapshot:
        return derive(prev, raw, self.url)

    async def busy_slots(self) -> int | None:
        """Busy slots right now, for sampling a request's concurrency; None when /slots is off or
        answers badly (the poll says why)."""
        try:
            resp = await self.get("/slots")
            slots = json_of(resp, "/slots", SLOTS) if resp.status_code == 200 else None
        except (httpx.HTTPError, SpectopError):
            return None
        return None if slots is None else sum(bool(s.get("is_processing")) for s in slots)

    async def window_counters(self) -> WindowCounters | None:
        """/metrics' counters now; None when /metrics is off or unreachable."""
        metrics = await self.scrape()
        return None if metrics is None else counters(RawPoll(time.monotonic(), metrics=metrics))
