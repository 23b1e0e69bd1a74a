"""What one poll of a server says: identity, load, throughput and drafting, with the window's deltas."""

from __future__ import annotations

from dataclasses import dataclass

from collectors import ledger


@dataclass(frozen=True, slots=True)
class ServerSnapshot:
    """One poll of an LLM server, derived against the previous poll (the window)."""

    url: str
    backend: str  # "llama.cpp", "vllm", "sglang"
    taken_at_s: float  # monotonic
    status: str  # "ok", "loading", "unreachable", "error"
    error: str | None = None
    fix: str | None = None
    model: str | None = None
    build: str | None = None
    slots_total: int | None = None
    slots_busy: int | None = None
    n_ctx_slot: int | None = None
    drafting: bool | None = None  # None when the server does not say
    spec_types: str | None = None
    requests_processing: int | None = None
    requests_deferred: int | None = None
    # window since the previous poll
    window_s: float | None = None
    live_tok_s: float | None = None  # tokens generated per second, in-flight requests included
    live_tok_s_exact: bool = False  # False when finished requests' last tokens could not be counted
    window_tokens: int | None = None
    window_drafted: int | None = None
    window_accepted: int | None = None
    window_steps: int | None = None
    window_per_position: tuple[int, ...] = ()
    busy_slots_per_decode: float | None = None  # over the window, not since start
    restarted: bool = False
    # lifetime counters (since the server started)
    tokens_predicted_total: int | None = None
    drafted_total: int | None = None
    accepted_total: int | None = None
    steps_total: int | None = None
    per_position_total: tuple[int, ...] = ()
    busy_slot_tokens: tuple[tuple[int, int], ...] = ()  # (slot id, tokens decoded so far) of busy slots
    metrics_status: str = "ok"  # or why /metrics is unavailable and how to enable it
    slots_status: str = "ok"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def acceptance(self) -> float | None:
        """Accepted over drafted in the window, else since start; None when nothing was drafted."""
        if self.window_drafted:
            return ledger.acceptance(self.window_drafted, self.window_accepted or 0)
        if self.drafted_total:
            return ledger.acceptance(self.drafted_total, self.accepted_total or 0)
        return None

    @property
    def mean_advance(self) -> float | None:
        """G = 1 + accepted/steps, over the window if it had steps, else since start."""
        if self.window_steps:
            return ledger.mean_committed_advance(self.window_accepted or 0, self.window_steps)
        if self.steps_total:
            return ledger.mean_committed_advance(self.accepted_total or 0, self.steps_total)
        return None

    @property
    def verified_width(self) -> float | None:
        """Mean positions verified per step: 1 + drafted/steps."""
        if self.window_steps:
            return ledger.mean_verified_width(self.window_drafted or 0, self.window_steps)
        if self.steps_total:
            return ledger.mean_verified_width(self.drafted_total or 0, self.steps_total)
        return None

    @property
    def survival(self) -> tuple[float, ...]:
        """Per-position acceptance S_j = accepted at position j / steps (window, else since start)."""
        if self.window_steps and self.window_per_position:
            return tuple(ledger.survival_from_positions(self.window_per_position, self.window_steps))
        if self.steps_total and self.per_position_total:
            return tuple(ledger.survival_from_positions(self.per_position_total, self.steps_total))
        return ()
