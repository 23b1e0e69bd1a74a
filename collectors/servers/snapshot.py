"""What one poll of a server says: identity, load, throughput and drafting, with the window's deltas.

One definition of each drafting figure (collectors/docs/energy-ledger.md), whatever the dialect:
- steps are *every* decode step after a request's first token (Eq. 4), drafted or not; the
  servers' drafts counters count only steps that drafted, so they have their own name
  (`window_drafted_steps`, `advance_per_drafted_step`) and never stand in for steps;
- G, verified width and survival S_j divide by those steps, so 1 + Σ S_j = G for one window;
- a window figure is the window's or unknown (None): it never falls back to lifetime counters,
  which have their own names (`acceptance_lifetime`, `mean_advance_lifetime`);
- a window that may be off says so (`window_approximate`): counters printed rounded, or a
  request that may have started and finished unseen between two polls.

Every text field is the server's and untrusted: a snapshot holds it with its control characters
made visible (`fmt.printable`), so no later display can send them to the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from collectors.energy import ledger
from collectors.fmt import printable
from collectors.servers.latency import LatencyCounters


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
    draft_tokens: int | None = None  # the most tokens a step drafts, as the server's own setting says
    requests_processing: int | None = None
    requests_deferred: int | None = None
    # window since the previous poll
    window_s: float | None = None
    live_tok_s: float | None = None  # tokens generated per second, in-flight requests included
    live_tok_s_exact: bool = False  # False: a lower bound (some tokens could not be counted)
    window_tokens: int | None = None
    window_drafted: int | None = None
    window_accepted: int | None = None
    window_steps: int | None = None  # every decode step after a request's first token
    window_drafted_steps: int | None = None  # steps that drafted (the servers' drafts counter)
    window_finished: int | None = None  # requests finished in the window, where that is counted
    window_steps_exact: bool = True  # False: a request may have run unseen, adding one step each
    window_per_position: tuple[int, ...] = ()
    busy_slots_per_decode: float | None = None  # over the window, not since start
    counters_rounded: bool = False  # a counter read was printed rounded (llama-server past 10⁶)
    restarted: bool = False
    # lifetime counters (since the server started)
    tokens_predicted_total: int | None = None
    drafted_total: int | None = None
    accepted_total: int | None = None
    steps_total: int | None = None  # every decode step, where the server counts them all
    drafted_steps_total: int | None = None
    per_position_total: tuple[int, ...] = ()
    busy_slot_tokens: tuple[tuple[int, int], ...] = ()  # (slot id, tokens decoded so far) of busy slots
    # engine state (engine_state.py), where the engine's page has it
    kv_cache_usage: float | None = None  # share of KV cache in use (0-1), mean over engines
    waiting_by_reason: tuple[tuple[str, int], ...] = ()  # vLLM: (reason, waiting requests)
    preemptions_total: int | None = None  # vLLM: requests preempted since start
    engine_sleeping: bool | None = None  # vLLM: an engine sleeps (weights offloaded or discarded)
    spec_num_steps: int | None = None  # SGLang: the active speculative_num_steps
    idle_s_total: float | None = None  # SGLang: seconds its scheduler had no work, since start
    itl_observations_total: int | None = None  # SGLang: inter-token latencies observed (live)
    # the server's own latency histograms, cache and finish counters, cumulative (servers/latency.py)
    latency_counters: LatencyCounters | None = None
    metrics_status: str = "ok"  # or why /metrics is unavailable and how to enable it
    slots_status: str = "ok"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, str):
                object.__setattr__(self, f.name, printable(value))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def window_approximate(self) -> bool:
        """The window's drafting figures may be off: rounded counters or an uncertain step count."""
        return self.counters_rounded or (self.window_steps is not None and not self.window_steps_exact)

    @property
    def acceptance(self) -> float | None:
        """Accepted over drafted in the window; None when the window drafted nothing (or is unknown)."""
        return _acceptance(self.window_drafted, self.window_accepted)

    @property
    def mean_advance(self) -> float | None:
        """G = 1 + accepted / steps over the window, every step counted; None when unknown."""
        return _advance(self.window_accepted, self.window_steps)

    @property
    def advance_per_drafted_step(self) -> float | None:
        """1 + accepted / steps that drafted: the servers' "mean acceptance length", not G."""
        return _advance(self.window_accepted, self.window_drafted_steps)

    @property
    def verified_width(self) -> float | None:
        """Mean positions verified per step, 1 + drafted / steps over the window."""
        if not self.window_steps or self.window_drafted is None:
            return None
        return ledger.mean_verified_width(self.window_drafted, self.window_steps)

    @property
    def survival(self) -> tuple[float, ...]:
        """S_j = share of the window's steps whose accepted run reached position j.

        Steps that drafted nothing or whose draft stopped before j (p-min, a short n-gram match)
        count as not reaching it, so 1 + Σ S_j = G; this is not Eq. 5's survival given that
        position j was drafted, which no server exposes when drafts vary in length.
        """
        if not self.window_steps or not self.window_per_position:
            return ()
        return tuple(ledger.survival_from_positions(self.window_per_position, self.window_steps))

    @property
    def acceptance_lifetime(self) -> float | None:
        """Accepted over drafted since the server started."""
        return _acceptance(self.drafted_total, self.accepted_total)

    @property
    def mean_advance_lifetime(self) -> float | None:
        """G since the server started, where it counts every step (not llama-server)."""
        return _advance(self.accepted_total, self.steps_total)


def _acceptance(drafted: int | None, accepted: int | None) -> float | None:
    """Accepted over drafted; None when nothing (or an unknown amount) was drafted."""
    return ledger.acceptance(drafted, accepted or 0) if drafted else None


def _advance(accepted: int | None, steps: int | None) -> float | None:
    """1 + accepted / steps; None when no step was counted or the accepted count is unknown."""
    return None if not steps or accepted is None else ledger.mean_committed_advance(accepted, steps)
