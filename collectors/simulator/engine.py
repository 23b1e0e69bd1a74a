"""One simulated llama-server: slots, continuous batching and verify steps on the shared chip.

Every active slot advances once per step. On the plain arm a step commits one token per slot;
on the draft arm it commits 1 + accepted draft tokens per slot, streamed as that many events
back to back. A newly admitted request spends its first step on its prompt and commits its
first token there. A step lasts as long as its committed tokens take at the calibrated rate of
the current batch (all arms' active requests together), so any window of steady work runs at
the profile's tok/s whatever the draws of acceptance; a small seeded jitter is added per step.

Pitfall handled: a loaded machine wakes the engine's thread late. Everything the server reports
happens on its schedule, not at the wake-up: steps are laid end to end on absolute times (a late
wake-up is caught up, not accumulated), a request is admitted at the first step boundary after
it arrived (an idle engine starts its step at the arrival), its timings are read off the schedule,
and the chip's load changes at the same instants (`Accelerator.set_load(at_s=...)`). So a stall
delays when tokens and joules are seen, never how many there are per second of the schedule. A
stall longer than `_MAX_LAG_S` (a suspended machine) restarts the schedule; the chip idles
through the gap, which produced no tokens.

With a `DraftPolicy` (a scheduled or K = 0 arm) each step's draft length K comes from its batch:
K > 0 runs on the draft's curves, drafts capped at K; K = 0 on "k0" (plain's, stretched; stepping.py).
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from collectors.simulator.accelerator import Accelerator
from collectors.simulator.counters import Counters, LiveCounts, MetricsView, metrics_view
from collectors.simulator.profiles import Profile
from collectors.simulator.stepping import DraftPolicy, load_of, step_seconds
from collectors.simulator.tasks import LiveView, Slot, SlotView, StepObserver, Task, common_prefix, slot_view
from collectors.simulator.textgen import DraftSampler, TokenStream, draft_key, natural_length, tokenize

_NEVER = 1 << 30
_MAX_LAG_S = 1.0  # a stalled thread catches up on missed steps; a longer stall restarts the schedule


class ContextExceeded(ValueError):
    """The prompt does not fit in a slot's context."""


class Engine:
    """A simulated llama-server arm ("plain", "draft" or a profile's named arm) with `n_slots` slots."""

    def __init__(
        self,
        kind: str,
        profile: Profile,
        accelerator: Accelerator,
        *,
        n_slots: int = 16,
        n_ctx: int = 4096,
        seed: int = 0,
        noise: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
        observers: Sequence[StepObserver] = (),
        policy: DraftPolicy | None = None,
    ) -> None:
        if kind not in ("plain", "draft", *profile.arm_names) and policy is None:
            raise ValueError(f"unknown arm kind {kind!r}")
        self.kind = kind
        self.policy = policy
        self._draft_kind = "draft" if policy is not None else kind  # whose drafts and curves it runs
        self.k_now: int | None = None  # the last step's draft length under a policy
        self.profile = profile
        self.n_slots = n_slots
        self.n_ctx = n_ctx
        self.t_start_us = int(clock() * 1e6)
        self._accel = accelerator
        self._seed = seed
        self._noise = noise
        self._clock = clock
        self._rng = random.Random(f"engine:{kind}:{seed}")
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._slots = [Slot(i) for i in range(n_slots)]
        self._pending: deque[Task] = deque()
        self._counters = Counters()
        self._live = LiveCounts(clock())
        self._observers: tuple[StepObserver, ...] = (
            self._counters,
            self._live,
            *observers,
        )  # each dialect's counters
        self._next_task_id = 0
        self._thread: threading.Thread | None = None

    @property
    def speculative(self) -> bool:
        return self.kind != "plain"

    # -- requests -------------------------------------------------------------------------------

    def submit(
        self,
        prompt: str,
        *,
        n_predict: int = -1,
        ignore_eos: bool = False,
        timings_per_token: bool = False,
        params: Mapping[str, object] | None = None,
        sample_seed: int | None = None,
    ) -> Task:
        """Queue a request; its events arrive on `task.out`, ending with a `TaskResult`."""
        prompt_ids = tokenize(prompt)
        if len(prompt_ids) >= self.n_ctx:
            raise ContextExceeded(
                f"the request exceeds the available context size ({len(prompt_ids)} tokens, "
                f"context {self.n_ctx}), try increasing it"
            )
        room = self.n_ctx - len(prompt_ids)
        limit = room if n_predict < 0 else min(n_predict, room)
        prompt_class = self.profile.prompt_class(prompt)
        sampler = None
        if self.speculative:
            shape, acceptance = self.profile.drafting(self._draft_kind, prompt_class)
            sampler = DraftSampler(draft_key(self._seed, self.kind, prompt), shape.length_probs, acceptance)
        with self._cond:
            t_submit = self._clock()
            if not self._pending and all(slot.task is None for slot in self._slots):
                self._accel.expect(self.kind, t_submit)  # an idle engine starts a step here
            task = Task(
                id=self._next_task_id,
                prompt=prompt,
                prompt_ids=prompt_ids,
                limit=limit,
                n_predict=n_predict,
                eos_at=_NEVER if ignore_eos else natural_length(prompt),
                timings_per_token=timings_per_token,
                params=dict(params or {}),
                prompt_class=prompt_class,
                tokens=TokenStream(prompt, sample_seed),
                sampler=sampler,
                t_submit=t_submit,
            )
            self._next_task_id += 1
            self._pending.append(task)
            self._cond.notify_all()
        return task

    def cancel(self, task: Task) -> None:
        """Stop a request at the next step boundary (its client went away)."""
        with self._cond:
            task.cancelled = True
            if task in self._pending:
                self._pending.remove(task)
                task.done = True
                task.out.put(None)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"sim-{self.kind}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._cond:
            for task in [*self._pending, *(s.task for s in self._slots if s.task)]:
                task.done = True
                task.out.put(None)
            self._pending.clear()
            for slot in self._slots:
                slot.task = None
        self._accel.set_load(self.kind, {})

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # -- the step loop --------------------------------------------------------------------------

    def _run(self) -> None:
        t_sched: float | None = None  # where the schedule stands: the last step's end; None when idle
        while not self._stop.is_set():
            with self._cond:
                now = self._clock()
                if t_sched is None:
                    if not self._pending:
                        self._accel.hold(self.kind, None)
                        self._cond.wait(timeout=0.5)
                        continue
                    t_step = max(self._pending[0].t_submit, now - _MAX_LAG_S)
                elif t_sched < now - _MAX_LAG_S:
                    self._accel.set_load(self.kind, {}, at_s=t_sched)
                    t_step = now
                else:
                    t_step = t_sched
                self._admit(t_step)
                active = [s.task for s in self._slots if s.task is not None]
                if not active:  # the last requests finished at t_step; the next arrives later
                    self._accel.set_load(self.kind, {}, at_s=t_step)
                    if self._pending:
                        self._accel.expect(self.kind, self._pending[0].t_submit)
                    t_sched = None
                    continue
                k = self.k_now = self.policy.k_at(len(active)) if self.policy else None
                curve_kind = "k0" if k == 0 else self._draft_kind
                plan = [(task, *self._plan(task, k)) for task in active]
                n_total = self._accel.set_load(self.kind, load_of(active, curve_kind), at_s=t_step)
                n_total = max(n_total, len(active))
                t_sched = t_step + step_seconds(
                    plan, n_total, curve_kind, self._accel, self._rng, self._noise
                )
                self._accel.hold(self.kind, t_sched)
            while (wait_s := t_sched - self._clock()) > 0:
                if self._stop.wait(wait_s):
                    return
            with self._cond:
                self._commit(plan, t_sched)

    def _plan(self, task: Task, k: int | None) -> tuple[int, int, int]:
        """(drafted, accepted, committed tokens) of `task` in the coming step; `k`: the policy's cap."""
        if task.stop_at <= task.n_decoded:
            return 0, 0, 0  # n_predict 0: the prompt is processed, nothing is generated
        if task.n_decoded == 0 or task.sampler is None:
            return 0, 0, 1
        remaining = task.stop_at - task.n_decoded
        cap = self._n_max(task) if k is None else min(k, self._n_max(task))
        drafted, accepted = task.sampler.next(min(cap, remaining - 1))
        return drafted, accepted, 1 + accepted

    def _n_max(self, task: Task) -> int:
        return self.profile.drafting(self._draft_kind, task.prompt_class)[0].n_max if self.speculative else 0

    def _admit(self, now: float) -> None:
        """Give free slots to the requests that had arrived by `now`, in order."""
        while self._pending and self._pending[0].t_submit <= now:
            free = [s for s in self._slots if s.task is None]
            if not free:
                return
            task = self._pending.popleft()
            slot = max(free, key=lambda s: (common_prefix(s.cache_ids, task.prompt_ids), -s.last_used))
            task.n_cached = min(common_prefix(slot.cache_ids, task.prompt_ids), task.n_prompt - 1)
            task.n_processed = task.n_prompt - task.n_cached
            task.slot_id = slot.id
            task.t_start = now
            slot.task = task
            slot.last = task
            slot.last_used = now

    def _commit(self, plan: list[tuple[Task, int, int, int]], now: float) -> None:
        c = self._counters
        for observer in self._observers:
            observer.on_step(plan, now)
        if self.policy is not None:
            self.policy.on_verify([a for t, _, a, _ in plan if t.n_decoded and not t.cancelled], len(plan))
        for task, drafted, accepted, committed in plan:
            if task.cancelled:
                self._finish(task, "none")
                continue
            if task.n_decoded == 0:
                task.t_prompt_done = now
                c.on_prompt(task.n_processed, task.n_cached, now - task.t_start)
            task.advance(drafted, accepted, committed, now, self._n_max(task))
            c.n_tokens_max = max(c.n_tokens_max, task.n_prompt + task.n_decoded)
            if task.n_decoded >= task.stop_at:
                self._finish(task, "limit" if task.n_decoded >= task.limit else "eos")

    def _finish(self, task: Task, stop_type: str) -> None:
        timings = task.timings()
        for observer in self._observers:
            observer.on_finish(task, stop_type)
        slot = self._slots[task.slot_id]
        slot.task = None
        slot.cache_ids = task.prompt_ids + task.ids[:-1]
        task.done = True
        task.out.put(task.result(stop_type, timings))
        self._cond.notify_all()

    # -- views ----------------------------------------------------------------------------------

    def slots(self) -> list[SlotView]:
        with self._cond:
            return [slot_view(slot) for slot in self._slots]

    def metrics(self, reset_buckets: bool = True) -> MetricsView:
        """The counters now; like llama-server, each scrape restarts the throughput buckets."""
        with self._cond:
            processing = sum(1 for s in self._slots if s.task is not None)
            deferred = max(0, len(self._pending) - (self.n_slots - processing))
            view = metrics_view(self._counters, processing, deferred)
            if reset_buckets:
                self._counters.reset_buckets()
            return view

    def live(self) -> LiveView:
        with self._cond:
            busy = sum(1 for s in self._slots if s.task is not None)
            deferred = max(0, len(self._pending) - (self.n_slots - busy))
            return self._live.view(busy, deferred)
