"""`RequestRecord`: one streamed request, shared by the collectors, the CLI and the dashboard.

Units are in the names."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from collectors.energy import ledger
from collectors.requests.latency import ChunkEvent, LatencyProfile


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One streamed request as spectop saw it, with the server's own counts.

    Committed tokens come from the server (`timings`/`usage`), never from counting events.
    Steps are every decode (verify) step after the first token, which comes from prefill: from
    the server's own counts where it gave them (`steps_exact`), else the bursts of events after
    the first, which split and merge under load. Without the server's counts G is read from
    those bursts and drafted/accepted, acceptance and width are unknown, never 0 or 1.00.
    """

    request_id: str
    server_url: str
    route: str
    t_send_s: float  # monotonic
    t_done_s: float
    events: tuple[ChunkEvent, ...]
    latency: LatencyProfile
    committed_tokens: int | None
    prompt_tokens: int | None = None
    draft_n: int | None = None  # absent when the server drafted nothing for this request
    draft_n_accepted: int | None = None
    server_steps: int | None = None  # every step, from the server's counts (streams.StreamState.steps)
    finish_reason: str | None = None
    model: str | None = None
    text_sha256: str = ""
    text_chars: int = 0
    concurrency_mean: float | None = None  # busy slots on the server while this request ran
    concurrency_max: int | None = None
    tag: str = ""  # who sent it: "probe", "sweep", ...
    error: str | None = None
    tokens_per_event_exact: bool = True  # False when the dialect gave no token counts per event

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def duration_s(self) -> float:
        return self.t_done_s - self.t_send_s

    @property
    def drafted(self) -> bool:
        return bool(self.draft_n)

    @property
    def steps_exact(self) -> bool:
        """The steps (and drafted/accepted counts) are the server's, not inferred from bursts."""
        return self.server_steps is not None

    @property
    def steps(self) -> int:
        if self.server_steps is not None:
            return self.server_steps
        return max(0, len(self.latency.burst_sizes) - 1)

    @property
    def acceptance(self) -> float | None:
        if self.draft_n is None or self.draft_n_accepted is None:
            return None
        return ledger.acceptance(self.draft_n, self.draft_n_accepted)

    @property
    def mean_advance(self) -> float | None:
        """G: tokens committed per verify step (1 + accepted/steps); from bursts without counts."""
        if self.steps_exact:
            return ledger.mean_committed_advance(self.draft_n_accepted or 0, self.steps)
        after_first = self.latency.burst_sizes[1:]  # each burst: one step's own token + accepted
        return ledger.mean_committed_advance(sum(after_first) - len(after_first), len(after_first))

    @property
    def verified_width(self) -> float | None:
        """Mean positions the target verified per step (1 + drafted/steps); None without counts."""
        if not self.steps_exact:
            return None
        return ledger.mean_verified_width(self.draft_n or 0, self.steps)

    @property
    def tok_s(self) -> float | None:
        """Committed tokens per second over the whole request, prefill included."""
        if not self.committed_tokens or self.duration_s <= 0:
            return None
        return self.committed_tokens / self.duration_s

    @property
    def decode_tok_s(self) -> float | None:
        """Tokens per second after the first token (the server's predicted_per_second convention)."""
        if not self.committed_tokens or self.committed_tokens < 2 or self.latency.ttft_ms is None:
            return None
        decode_s = self.duration_s - self.latency.ttft_ms / 1000.0
        return (self.committed_tokens - 1) / decode_s if decode_s > 0 else None


def busy_figures(busy_samples: Iterable[int]) -> tuple[float | None, int | None]:
    """Mean and max of the server's busy slots sampled while a request ran (its batch).

    The request holds a slot for as long as it runs, so a sample that reads no busy slot was taken
    at its edges (before the server admitted it, after it was released) and is left out: a request
    alone on the server ran at batch 1, not at the 0.94 that counting such a sample gave. None: no
    sample saw it.
    """
    seen = [busy for busy in busy_samples if busy > 0]
    return (sum(seen) / len(seen), max(seen)) if seen else (None, None)
