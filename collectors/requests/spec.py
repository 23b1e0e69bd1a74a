"""What one request asks for (`RequestSpec`) and how much its stream may carry (`StreamLimits`).

Kept apart from the client so that a server dialect can build its request body from a spec
(collectors/servers/wire.py) without importing the client that asks the dialect for it.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PROMPT = (
    "Explain, in plain words, why a power supply draws more current when the load on it grows, "
    "and what that means for the efficiency of a computer under heavy work."
)


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What to send. Temperature 0 and a fixed length make plain and draft outputs comparable."""

    prompt: str = DEFAULT_PROMPT
    max_tokens: int = 128
    route: str = "completion"  # "completion" (the server's native route) or "chat" (OpenAI chat)
    temperature: float = 0.0
    ignore_eos: bool = True
    # a dialect's `backend` (collectors/servers/registry.py); None: the registry's first, the server
    # spectop looks for by default; a name no dialect has: OpenAI-style routes without extensions
    dialect: str | None = None
    model: str | None = None
    id_slot: int | None = None  # run on this slot, where the server has slots (each its own slot)


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much one stream may carry and how long it may take, relative to the tokens asked for.

    Generous: a server sends about one event per token (fewer when drafting), a few hundred bytes
    each, and a final event that may repeat the prompt; the wall time allows a long prefill and a
    slow decode. `concurrent` requests sharing the server may each decode that much slower.
    """

    base_events: int = 64
    events_per_token: int = 4
    base_bytes: int = 1 << 20
    bytes_per_token: int = 16 << 10
    base_s: float = 60.0
    seconds_per_token: float = 1.0

    def events(self, spec: RequestSpec) -> int:
        return self.base_events + self.events_per_token * spec.max_tokens

    def bytes(self, spec: RequestSpec) -> int:
        return self.base_bytes + self.bytes_per_token * spec.max_tokens + 4 * len(spec.prompt.encode())

    def seconds(self, spec: RequestSpec, concurrent: int = 1) -> float:
        return self.base_s + self.seconds_per_token * spec.max_tokens * max(1, concurrent)


STREAM_LIMITS = StreamLimits()
