"""The simulator's own log of finished requests: each one's timestamps and its step gaps.

A `StepObserver` of one engine, kept beside (not inside) the dialects' metric pages, so a test
can hold what a page says against what the engine did: the raw times, not buckets. Every time is
on the engine's schedule (monotonic seconds): arrival (`t_submit`), first schedule (`t_start`),
first token (`t_first`: the prefill step's end) and the last token (`t_end`). `gaps` is one entry
per decode step after the first token: (seconds since the request's previous step, tokens the
step committed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from collectors.simulator.tasks import StepPlan, Task


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One finished request as the engine ran it."""

    t_submit: float
    t_start: float
    t_first: float | None  # None: it left before its first token
    t_end: float
    n_decoded: int
    n_prompt: int
    n_cached: int
    stop_type: str  # "limit", "eos", or "none" (cancelled)
    gaps: tuple[tuple[float, int], ...]


@dataclass
class _Open:
    gaps: list[tuple[float, int]] = field(default_factory=list)


class RequestLog:
    """Finished requests in the order they finished; thread-safe to read while the engine runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, _Open] = {}
        self._done: list[LoggedRequest] = []

    def on_step(self, plan: StepPlan, now: float) -> None:
        with self._lock:
            for task, _drafted, _accepted, committed in plan:
                if task.cancelled or task.n_decoded == 0:
                    continue  # the prefill step ends at the first token: TTFT, not a gap
                self._open.setdefault(task.id, _Open()).gaps.append((now - task.t_gen_last, committed))

    def on_finish(self, task: Task, stop_type: str) -> None:
        with self._lock:
            record = self._open.pop(task.id, _Open())
            self._done.append(
                LoggedRequest(
                    t_submit=task.t_submit,
                    t_start=task.t_start,
                    t_first=task.t_prompt_done if task.n_decoded else None,
                    t_end=task.t_gen_last if task.n_decoded else task.t_start,
                    n_decoded=task.n_decoded,
                    n_prompt=task.n_prompt,
                    n_cached=task.n_cached,
                    stop_type=stop_type,
                    gaps=tuple(record.gaps),
                )
            )

    def finished(self) -> list[LoggedRequest]:
        """Every request finished so far."""
        with self._lock:
            return list(self._done)
