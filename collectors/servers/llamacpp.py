"""llama-server: poll /health, /props, /slots and /metrics into a ServerSnapshot.

Pitfalls handled (reference/llama_server.md): token and speculative counters only move when a
request finishes, so live tokens/s comes from the slots' `n_decoded`; `n_busy_slots_per_decode`
is a cumulative average, so the window's value is re-derived from two scrapes; `/props` always
says `speculative.types: none`, so drafting is read from `/slots`; /metrics (501 without
--metrics) and /slots (501 with --no-slots) may be off, and each says how to turn it on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from collectors import promtext
from collectors.servers.base import Probe, ServerCollector, WindowCounters, json_with, window_delta
from collectors.servers.series import as_int
from collectors.servers.snapshot import ServerSnapshot

BACKEND = "llama.cpp"
_P = "llamacpp:"
_PER_POSITION = _P + "spec_decode_num_accepted_tokens_per_pos_total"


@dataclass(frozen=True, slots=True)
class SlotState:
    slot_id: int
    task_id: int | None
    n_decoded: int
    busy: bool


@dataclass
class RawPoll:
    """What the endpoints returned at one instant; `derive` turns two of these into a snapshot."""

    t_s: float
    status: str = "ok"
    error: str | None = None
    fix: str | None = None
    props: dict[str, Any] | None = None
    slots: list[dict[str, Any]] | None = None
    slots_status: str = "ok"
    metrics: dict[str, list[promtext.Sample]] | None = None
    metrics_status: str = "ok"
    process_start: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def metric(self, name: str) -> float | None:
        return promtext.scalar(self.metrics, _P + name) if self.metrics else None

    def per_position(self) -> tuple[int, ...]:
        rows = (self.metrics or {}).get(_PER_POSITION, [])
        ordered = sorted(rows, key=lambda s: int(s.labels.get("position", 0)))
        return tuple(int(s.value) for s in ordered)

    def slot_states(self) -> dict[int, SlotState]:
        states = {}
        for slot in self.slots or []:
            next_token = slot.get("next_token") or [{}]
            if isinstance(next_token, dict):  # older builds sent an object, this one a 1-element array
                next_token = [next_token]
            states[int(slot["id"])] = SlotState(
                slot_id=int(slot["id"]),
                task_id=slot.get("id_task"),
                n_decoded=int(next_token[0].get("n_decoded", 0)),
                busy=bool(slot.get("is_processing")),
            )
        return states


def _delta(prev: float | None, cur: float | None) -> int | None:
    return None if prev is None or cur is None else int(round(cur - prev))


def restarted(prev: RawPoll, cur: RawPoll) -> bool:
    """A new process start stamp, or any counter going backwards."""
    if prev.process_start and cur.process_start and prev.process_start != cur.process_start:
        return True
    for name in ("tokens_predicted_total", "n_decode_total", "spec_decode_num_draft_tokens_total"):
        a, b = prev.metric(name), cur.metric(name)
        if a is not None and b is not None and b < a:
            return True
    return False


def generated_tokens(prev: RawPoll, cur: RawPoll) -> tuple[int, bool]:
    """Tokens generated between two polls, and whether the count is exact.

    Running slots give their `n_decoded` growth; requests that finished in between are completed
    from the `tokens_predicted_total` jump minus what was already seen of them.
    """
    before, after = prev.slot_states(), cur.slot_states()
    generated = seen_of_finished = 0
    for slot_id, now in after.items():
        was = before.get(slot_id)
        if was is not None and was.busy and now.busy and was.task_id == now.task_id:  # the same task
            generated += max(0, now.n_decoded - was.n_decoded)
            continue
        if was is not None and was.busy:
            seen_of_finished += was.n_decoded
        if now.busy:
            generated += now.n_decoded
    finished_total = _delta(prev.metric("tokens_predicted_total"), cur.metric("tokens_predicted_total"))
    if finished_total is None:
        return generated, False
    return generated + max(0, finished_total - seen_of_finished), True


def derive(prev: RawPoll | None, cur: RawPoll, url: str) -> ServerSnapshot:
    """A snapshot from the current poll, with window figures when a previous poll exists."""
    props = cur.props or {}
    states = cur.slot_states()
    first_slot = (cur.slots or [{}])[0] if cur.slots else {}
    # only slots that have run a task carry params
    params: dict[str, Any] = next((s["params"] for s in cur.slots or [] if s.get("params")), {})
    spec_types = params.get("speculative.types")
    base: dict[str, Any] = dict(
        url=url,
        backend=BACKEND,
        taken_at_s=cur.t_s,
        status=cur.status,
        error=cur.error,
        fix=cur.fix,
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
        tokens_predicted_total=as_int(cur.metric("tokens_predicted_total")),
        drafted_total=as_int(cur.metric("spec_decode_num_draft_tokens_total")),
        accepted_total=as_int(cur.metric("spec_decode_num_accepted_tokens_total")),
        steps_total=as_int(cur.metric("spec_decode_num_drafts_total")),
        per_position_total=cur.per_position(),
        metrics_status=cur.metrics_status,
        slots_status=cur.slots_status,
    )
    if prev is None or prev.status != "ok" or cur.status != "ok":
        return ServerSnapshot(**base)
    if restarted(prev, cur):
        return ServerSnapshot(**base, restarted=True)
    window_s = cur.t_s - prev.t_s
    tokens, exact = generated_tokens(prev, cur)
    window: dict[str, Any] = dict(
        window_s=window_s,
        window_tokens=tokens,
        live_tok_s=tokens / window_s if window_s > 0 and cur.slots is not None else None,
        live_tok_s_exact=exact,
        window_drafted=_delta(
            prev.metric("spec_decode_num_draft_tokens_total"),
            cur.metric("spec_decode_num_draft_tokens_total"),
        ),
        window_accepted=_delta(
            prev.metric("spec_decode_num_accepted_tokens_total"),
            cur.metric("spec_decode_num_accepted_tokens_total"),
        ),
        window_steps=_delta(
            prev.metric("spec_decode_num_drafts_total"), cur.metric("spec_decode_num_drafts_total")
        ),
        busy_slots_per_decode=window_busy_per_decode(prev, cur),
    )
    before_pos, after_pos = prev.per_position(), cur.per_position()
    if after_pos:
        before_pos = before_pos + (0,) * (len(after_pos) - len(before_pos))
        window["window_per_position"] = tuple(b - a for a, b in zip(before_pos, after_pos, strict=False))
    return ServerSnapshot(**base, **window)


def counters(raw: RawPoll) -> WindowCounters:
    """The cumulative counters of one poll (None where /metrics is off or lacks them)."""
    n_decode = raw.metric("n_decode_total")
    busy_mean = raw.metric("n_busy_slots_per_decode")  # Σ busy / n_decode since start
    return WindowCounters(
        tokens=raw.metric("tokens_predicted_total"),
        drafted=raw.metric("spec_decode_num_draft_tokens_total"),
        accepted=raw.metric("spec_decode_num_accepted_tokens_total"),
        steps=raw.metric("spec_decode_num_drafts_total"),
        # undo the running average: Σ busy over all decodes, whose delta gives the window's mean
        request_steps=busy_mean * n_decode if busy_mean is not None and n_decode is not None else None,
        decode_steps=n_decode,
    )


def window_busy_per_decode(prev: RawPoll, cur: RawPoll) -> float | None:
    """Busy slots averaged over the decodes between two polls."""
    return window_delta(counters(prev), counters(cur)).busy_per_decode


class LlamaCppCollector(ServerCollector):
    """Polls one llama-server; keeps the previous poll so each snapshot has a window."""

    backend = BACKEND
    display_name = "llama-server"
    start_hint = "start llama-server there"
    default_route = "completion"  # the native route: exact token counts and timings on every event
    load_endpoint = "/slots"
    has_window_counters = True  # with --metrics; they count a request when it finishes
    has_per_position = True
    has_slots = True
    http_hints = {
        ("/metrics", 501): "not available: start the server with --metrics",
        ("/slots", 501): "not available: the server was started with --no-slots",
    }

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        """/props has `build_info` and `total_slots`."""
        return json_with(await probe.get("/props"), "total_slots", "build_info")

    async def fetch(self) -> RawPoll:
        """One raw poll of all four endpoints, concurrently. Never raises for HTTP trouble."""
        t_s = time.monotonic()
        get = self._client.get
        try:
            health, props, slots, metrics = await asyncio.gather(
                get(self.url + "/health"),
                get(self.url + "/props"),
                get(self.url + "/slots"),
                get(self.url + "/metrics"),
            )
        except httpx.TransportError as exc:
            error, fix = self.unreachable(exc)
            return RawPoll(t_s, status="unreachable", error=error, fix=fix)
        raw = RawPoll(t_s)
        if health.status_code == 503:
            raw.status, raw.error = "loading", "the server is loading its model"
        elif health.status_code != 200:
            raw.status, raw.error = "error", f"/health answered HTTP {health.status_code}"
        if props.status_code == 200:
            raw.props = props.json()
        if slots.status_code == 200:
            raw.slots = slots.json()
        else:
            raw.slots_status = self.http_problem(slots, "/slots")
        if metrics.status_code == 200:
            raw.metrics = promtext.parse(metrics.text)
            raw.process_start = metrics.headers.get("Process-Start-Time-Unix")
        else:
            raw.metrics_status = self.http_problem(metrics, "/metrics")
        return raw

    def derive(self, prev: RawPoll | None, raw: RawPoll) -> ServerSnapshot:
        return derive(prev, raw, self.url)

    async def busy_slots(self) -> int | None:
        """Busy slots right now, for sampling a request's concurrency; None when /slots is off."""
        try:
            resp = await self._client.get(self.url + "/slots")
        except httpx.TransportError:
            return None
        if resp.status_code != 200:
            return None
        return sum(bool(s.get("is_processing")) for s in resp.json())

    async def window_counters(self) -> WindowCounters | None:
        """/metrics' counters now; None when /metrics is off or unreachable."""
        metrics = await self.scrape()
        return None if metrics is None else counters(RawPoll(time.monotonic(), metrics=metrics))
