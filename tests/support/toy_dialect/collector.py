"""The toy dialect's detection and polls: /api/version says who it is, /api/ps what runs now,
/api/counters its cumulative tokens and decode steps."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from collectors.servers.answers import json_body
from collectors.servers.base import Probe, RawPoll, ServerCollector, WindowCounters, poll_fields
from collectors.servers.snapshot import ServerSnapshot
from tests.support.toy_dialect.advice import ToyAdvice
from tests.support.toy_dialect.stream import ToyWire


@dataclass
class ToyPoll(RawPoll):
    running: int | None = None
    generated: int | None = None
    version: str | None = None


class ToyCollector(ToyWire, ToyAdvice, ServerCollector):
    """An Ollama-like server: its own routes, its own stream, its own flags."""

    backend = "toy"
    display_name = "Toy"
    start_hint = "start toyserve there"
    default_route = "completion"
    load_endpoint = "/api/ps"
    has_window_counters = True

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        body = json_body(await probe.get("/api/version"))
        return isinstance(body, dict) and body.get("server") == "toy"

    async def fetch(self) -> ToyPoll:
        try:
            version = json_body(await self.get("/api/version")) or {}
            ps = json_body(await self.get("/api/ps")) or {}
            counters = json_body(await self.get("/api/counters")) or {}
        except httpx.HTTPError as exc:
            return ToyPoll(time.monotonic(), **self.failed(exc))
        return ToyPoll(
            time.monotonic(),
            running=ps.get("running"),
            generated=counters.get("generated_tokens"),
            version=version.get("version"),
        )

    def derive(self, prev: ToyPoll | None, raw: ToyPoll) -> ServerSnapshot:
        window_s = raw.t_s - prev.t_s if prev is not None and prev.generated is not None else None
        grew = raw.generated - prev.generated if window_s and raw.generated is not None else None
        return ServerSnapshot(
            **poll_fields(self.url, self.backend, raw),
            build=raw.version,
            slots_busy=raw.running,
            tokens_predicted_total=raw.generated,
            window_s=window_s,
            live_tok_s=grew / window_s if grew is not None and window_s else None,
        )

    async def busy_slots(self) -> int | None:
        return (json_body(await self.get("/api/ps")) or {}).get("running")

    async def window_counters(self) -> WindowCounters | None:
        body = json_body(await self.get("/api/counters"))
        return WindowCounters(tokens=body["generated_tokens"], steps=body["decode_steps"]) if body else None
