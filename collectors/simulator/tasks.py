"""The engine's records: requests in flight, slots, what streams out, and the server counters."""

from __future__ import annotations

import queue
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from collectors.simulator.profiles import PromptClass
from collectors.simulator.textgen import DraftSampler, TokenStream


@dataclass(frozen=True, slots=True)
class Timings:
    """A request's `timings` at one moment (llama-server `server_slot_stats`), in real ms."""

    cache_n: int
    prompt_n: int
    prompt_ms: float
    predicted_n: int
    predicted_ms: float
    draft_n: int  # 0 when nothing was drafted: the JSON then has no draft fields
    draft_n_accepted: int


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """One committed token, streamed as one SSE event."""

    token_id: int
    text: str
    n_decoded: int
    timings: Timings | None  # only with `timings_per_token`
    more_in_step: bool = False  # more tokens of the same verify step follow (one vLLM/SGLang chunk)


@dataclass(frozen=True, slots=True)
class TaskResult:
    """A finished request."""

    content: str
    id_slot: int
    n_decoded: int
    n_prompt: int
    tokens_cached: int
    stop_type: str  # "limit" | "eos" | "none" (cancelled)
    has_new_line: bool
    timings: Timings


@dataclass(eq=False, slots=True)
class Task:
    """One request inside the engine. Mutated only by the engine thread, under its lock."""

    id: int
    prompt: str
    prompt_ids: list[int]
    limit: int  # n_predict, capped by the context left after the prompt
    n_predict: int  # as requested (-1: unlimited)
    eos_at: int  # tokens after which the model ends by itself (a huge number with ignore_eos)
    timings_per_token: bool
    params: Mapping[str, object]  # request parameters as shown by /slots
    prompt_class: PromptClass
    tokens: TokenStream
    sampler: DraftSampler | None
    out: queue.SimpleQueue[TokenEvent | TaskResult | None] = field(default_factory=queue.SimpleQueue)
    slot_id: int = -1
    n_decoded: int = 0
    n_cached: int = 0
    n_processed: int = 0
    t_submit: float = 0.0  # times on the engine's schedule (see engine.py)
    t_start: float = 0.0
    t_prompt_done: float = 0.0
    t_gen_last: float = 0.0
    draft_n: int = 0
    draft_accepted: int = 0
    drafts: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    has_new_line: bool = False
    cancelled: bool = False
    done: bool = False

    def advance(self, drafted: int, accepted: int, committed: int, now: float, n_max: int) -> None:
        """Apply one verify step: record its draft, then stream its committed tokens as a burst."""
        if drafted:
            self.draft_n += drafted
            self.draft_accepted += accepted
            self.drafts += 1
            if not self.accepted_per_pos:
                self.accepted_per_pos = [0] * n_max
            for pos in range(accepted):
                self.accepted_per_pos[pos] += 1
        self.t_gen_last = now
        n_before = self.n_decoded
        for _ in range(committed):
            token_id, text = self.tokens.next()
            self.n_decoded += 1
            self.ids.append(token_id)
            self.text.append(text)
            self.has_new_line = self.has_new_line or "\n" in text
            timings = self.timings() if self.timings_per_token else None
            more = self.n_decoded < n_before + committed
            self.out.put(TokenEvent(token_id, text, self.n_decoded, timings, more))

    def result(self, stop_type: str, timings: Timings) -> TaskResult:
        return TaskResult(
            content="".join(self.text),
            id_slot=self.slot_id,
            n_decoded=self.n_decoded,
            n_prompt=self.n_prompt,
            tokens_cached=self.n_prompt + max(0, self.n_decoded - 1),
            stop_type=stop_type,
            has_new_line=self.has_new_line,
            timings=timings,
        )

    @property
    def stop_at(self) -> int:
        return min(self.limit, self.eos_at)

    @property
    def n_prompt(self) -> int:
        return len(self.prompt_ids)

    def timings(self) -> Timings:
        prompt_ms = max(0.0, self.t_prompt_done - self.t_start) * 1000.0 if self.t_prompt_done else 0.0
        predicted_ms = 0.0
        if self.n_decoded > 0:
            predicted_ms = max(0.001, (self.t_gen_last - self.t_prompt_done) * 1000.0)
        return Timings(
            self.n_cached,
            self.n_processed,
            prompt_ms,
            self.n_decoded,
            predicted_ms,
            self.draft_n,
            self.draft_accepted,
        )


# (task, drafted, accepted, committed tokens) of each request in one engine step
StepPlan = list[tuple[Task, int, int, int]]


class StepObserver(Protocol):
    """Counters that follow the engine: each dialect keeps its own (llama-server's `Counters`,
    vLLM's and SGLang's metrics). Called under the engine's lock, on the engine's schedule."""

    def on_step(self, plan: StepPlan, now: float) -> None:
        """A step ends at `now`; the tasks are as they were before it (cancelled ones included)."""

    def on_finish(self, task: Task, stop_type: str) -> None:
        """A request left its slot ("limit", "eos", or "none" when cancelled)."""


@dataclass(eq=False, slots=True)
class Slot:
    """A server slot: its running task, the last one it ran, and the tokens left in its cache."""

    id: int
    task: Task | None = None
    last: Task | None = None
    cache_ids: list[int] = field(default_factory=list)
    last_used: float = 0.0


@dataclass(frozen=True, slots=True)
class SlotView:
    """A slot at one moment, as `/slots` shows it."""

    id: int
    is_processing: bool
    id_task: int | None  # None until the slot has run a task
    n_prompt_tokens: int
    n_prompt_tokens_processed: int
    n_prompt_tokens_cache: int
    params: Mapping[str, object]
    has_next_token: bool
    has_new_line: bool
    n_remain: int
    n_decoded: int


@dataclass(frozen=True, slots=True)
class LiveView:
    """The engine right now, for the demo's live line (not part of the llama-server dialect)."""

    busy_slots: int
    deferred: int
    committed_tokens: int  # every token streamed so far, finished requests or not
    drafted_tokens: int
    accepted_tokens: int
    t_s: float  # the schedule instant these counts are for: the end of the last committed step


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def slot_view(slot: Slot) -> SlotView:
    """A slot as `/slots` shows it: its running task, else the last one it ran."""
    task = slot.task or slot.last
    running = slot.task is not None
    if task is None:
        return SlotView(slot.id, False, None, 0, 0, 0, {}, False, False, -1, 0)
    n_remain = -1
    if running and task.n_predict >= 0:
        n_remain = task.n_predict - task.n_decoded
    return SlotView(
        id=slot.id,
        is_processing=running,
        id_task=task.id,
        n_prompt_tokens=task.n_prompt + max(0, task.n_decoded - 1),
        n_prompt_tokens_processed=task.n_processed if running else 0,
        n_prompt_tokens_cache=task.n_cached if running else 0,
        params=task.params,
        has_next_token=running,
        has_new_line=task.has_new_line if running else False,
        n_remain=n_remain,
        n_decoded=task.n_decoded if running else 0,
    )
