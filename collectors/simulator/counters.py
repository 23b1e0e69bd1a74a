"""llama-server's server-wide counters and what one `/metrics` scrape sees of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.simulator.tasks import LiveView, StepPlan, Task


@dataclass(slots=True)
class Counters:
    """Server-wide counters (llama-server `server_metrics`); buckets reset on every scrape."""

    prompt_tokens: int = 0
    prompt_tokens_cached: int = 0
    prompt_seconds: float = 0.0
    tokens_predicted: int = 0
    tokens_predicted_seconds: float = 0.0
    n_decode: int = 0
    n_busy_slots: int = 0
    n_tokens_max: int = 0
    draft_tokens: int = 0
    accepted_tokens: int = 0
    drafts: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    bucket_prompt_tokens: int = 0
    bucket_prompt_s: float = 0.0
    bucket_predicted_steps: int = 0
    bucket_predicted_s: float = 0.0

    def on_step(self, plan: StepPlan, now: float) -> None:
        self.n_decode += 1
        self.n_busy_slots += len(plan)

    def on_finish(self, task: Task, stop_type: str) -> None:
        if task.n_decoded > 0:
            self.on_prediction(task, task.timings().predicted_ms / 1000.0)

    def on_prompt(self, n_processed: int, n_cached: int, seconds: float) -> None:
        """A prompt was processed (counted at once, not at the end of the request)."""
        self.prompt_tokens += n_processed
        self.prompt_tokens_cached += n_cached
        self.prompt_seconds += seconds
        self.bucket_prompt_tokens += n_processed
        self.bucket_prompt_s += seconds

    def on_prediction(self, task: Task, predicted_s: float) -> None:
        """A request released its slot: its tokens and drafts count only now."""
        self.tokens_predicted += task.n_decoded
        self.tokens_predicted_seconds += predicted_s
        self.bucket_predicted_steps += task.n_decoded - 1
        self.bucket_predicted_s += predicted_s
        self.draft_tokens += task.draft_n
        self.accepted_tokens += task.draft_accepted
        self.drafts += task.drafts
        if task.accepted_per_pos:
            if not self.accepted_per_pos:
                self.accepted_per_pos = [0] * len(task.accepted_per_pos)
            for pos, n in enumerate(task.accepted_per_pos):
                self.accepted_per_pos[pos] += n

    def reset_buckets(self) -> None:
        self.bucket_prompt_tokens = self.bucket_predicted_steps = 0
        self.bucket_prompt_s = self.bucket_predicted_s = 0.0


@dataclass(slots=True)
class LiveCounts:
    """Every token streamed so far and the drafts behind them, for the demo's live line."""

    t_committed: float  # the schedule instant of the last committed step
    committed: int = 0
    drafted: int = 0
    accepted: int = 0

    def on_step(self, plan: StepPlan, now: float) -> None:
        self.t_committed = now
        for task, drafted, accepted, committed in plan:
            if not task.cancelled:
                self.committed += committed
                self.drafted += drafted
                self.accepted += accepted

    def on_finish(self, task: Task, stop_type: str) -> None:
        return

    def view(self, busy: int, deferred: int) -> LiveView:
        return LiveView(busy, deferred, self.committed, self.drafted, self.accepted, self.t_committed)


@dataclass(frozen=True, slots=True)
class MetricsView:
    """Everything `/metrics` renders, taken at one scrape."""

    prompt_tokens: int
    prompt_tokens_cached: int
    prompt_seconds: float
    tokens_predicted: int
    tokens_predicted_seconds: float
    n_decode: int
    n_tokens_max: int
    draft_tokens: int
    accepted_tokens: int
    drafts: int
    prompt_tokens_per_s: float
    predicted_tokens_per_s: float
    requests_processing: int
    requests_deferred: int
    busy_slots_per_decode: float
    accepted_per_pos: tuple[int, ...]


def metrics_view(c: Counters, processing: int, deferred: int) -> MetricsView:
    """The counters as one `/metrics` scrape renders them."""
    return MetricsView(
        prompt_tokens=c.prompt_tokens,
        prompt_tokens_cached=c.prompt_tokens_cached,
        prompt_seconds=c.prompt_seconds,
        tokens_predicted=c.tokens_predicted,
        tokens_predicted_seconds=c.tokens_predicted_seconds,
        n_decode=c.n_decode,
        n_tokens_max=c.n_tokens_max,
        draft_tokens=c.draft_tokens,
        accepted_tokens=c.accepted_tokens,
        drafts=c.drafts,
        prompt_tokens_per_s=_rate(c.bucket_prompt_tokens, c.bucket_prompt_s),
        predicted_tokens_per_s=_rate(c.bucket_predicted_steps, c.bucket_predicted_s),
        requests_processing=processing,
        requests_deferred=deferred,
        busy_slots_per_decode=c.n_busy_slots / max(c.n_decode, 1),
        accepted_per_pos=tuple(c.accepted_per_pos),
    )


def _rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0
