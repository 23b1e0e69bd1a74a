"""llama-server's per-request log block: one `LoggedRequest` per finished task, keyed by slot and task.

llama-server (tools/server/server-context.cpp) logs each request as `slot <func>: id <slot> | task
<task> | <text>` lines (the prefix is `"slot %12.*s: id %2d | task %d | "`, the function name cut
to 12 characters, so `print_timing`): `launch_slot_` when it starts, `print_timing` with `prompt
eval time`, `eval time`, `total time` and, only when it drafted, `draft acceptance`, then
`release` with `stop processing`. Pitfalls handled: the prefix may carry an elapsed-time stamp
`M.SS.mmm.uuu` whose minutes field is unbounded, a level letter (`I`), colour escapes
(`--log-colors`) and a router's `[ port]` tag; several slots' lines interleave, so lines are
gathered per (slot, task); the draft line changed (releases before mid-2025 print no `mean len`);
`print_timing` may come before or after `release` across builds, so a block ends when it has
both its totals and its release, or when the slot starts its next task; a line cut by a rotation
or a partial write is skipped, never a crash. Servers other than llama-server log no such lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PREFIX = re.compile(
    r"^(?:\[\s*\d+\]\s+)?"  # a router's forwarded child line
    r"(?:(?P<min>\d+)\.(?P<sec>\d{2})\.(?P<ms>\d{3})\.(?P<us>\d{3})\s+)?"
    r"(?:[IWEDT]\s+)?"
    r"slot\s+(?P<func>[\w ()]+?):\s+id\s+(?P<slot>\d+)\s+\|\s+task\s+(?P<task>-?\d+)\s+\|\s?(?P<text>.*)$"
)
_PROMPT = re.compile(r"prompt eval time =\s*(?P<ms>[\d.]+) ms /\s*(?P<n>\d+) tokens")
_EVAL = re.compile(r"^\s*eval time =\s*(?P<ms>[\d.]+) ms /\s*(?P<n>\d+) tokens")
_TOTAL = re.compile(r"total time =\s*(?P<ms>[\d.]+) ms /\s*(?P<n>\d+) tokens")
_DRAFT = re.compile(
    r"draft acceptance =\s*(?P<rate>[\d.]+)\s*\(\s*(?P<acc>\d+) accepted /\s*(?P<gen>\d+) generated\)"
    r"(?:,\s*mean len =\s*(?P<len>[\d.]+))?"
)
_RELEASE = re.compile(r"stop processing: n_tokens = (?P<n>\d+), truncated = (?P<trunc>\d+)")


@dataclass(frozen=True, slots=True)
class LogLine:
    """One slot line: who logged it, its elapsed stamp (s since the server started) if any, the text."""

    slot_id: int
    task_id: int
    func: str
    text: str
    stamp_s: float | None


def parse_line(line: str) -> LogLine | None:
    """The slot line `line` is, else None (every other server line, a cut line)."""
    m = _PREFIX.match(_ANSI.sub("", line).rstrip("\r\n"))
    if m is None:
        return None
    stamp = None
    if m["min"] is not None:
        stamp = int(m["min"]) * 60 + int(m["sec"]) + int(m["ms"]) / 1e3 + int(m["us"]) / 1e6
    return LogLine(int(m["slot"]), int(m["task"]), m["func"].strip(), m["text"], stamp)


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One finished request as llama-server logged it; times in ms as logged, counts as logged."""

    slot_id: int
    task_id: int
    prompt_tokens: int  # prompt tokens evaluated (a cached prefix is not among them)
    prompt_ms: float
    generated_tokens: int  # tokens decoded: the committed tokens
    eval_ms: float
    total_ms: float
    draft_n: int | None = None  # no draft line: nothing was drafted
    draft_n_accepted: int | None = None
    mean_len: float | None = None  # the log's own 1 + accepted / drafting steps (newer builds)
    context_tokens: int | None = None  # n_tokens at release
    truncated: bool = False
    stamp_s: float | None = None  # the stamp of its last line, when the log has stamps


@dataclass
class _Block:
    timings: dict[str, tuple[float, int]] = field(default_factory=dict)
    draft: tuple[int, int, float | None] | None = None
    release: tuple[int, bool] | None = None
    stamp_s: float | None = None


class LogParser:
    """Feed lines in order; `feed` returns the requests whose block a line completed."""

    def __init__(self) -> None:
        self._open: dict[tuple[int, int], _Block] = {}

    def feed(self, line: str) -> list[LoggedRequest]:
        parsed = parse_line(line)
        if parsed is None or parsed.task_id < 0:
            return []
        done: list[LoggedRequest] = []
        key = (parsed.slot_id, parsed.task_id)
        if key not in self._open:
            # the slot's previous task is over, whatever it still lacked
            for other in [k for k in self._open if k[0] == parsed.slot_id]:
                done += self._finish(other)
        block = self._open.setdefault(key, _Block())
        block.stamp_s = parsed.stamp_s if parsed.stamp_s is not None else block.stamp_s
        text = parsed.text
        for name, pattern in (("prompt", _PROMPT), ("eval", _EVAL), ("total", _TOTAL)):
            m = pattern.search(text)
            if m and (name != "eval" or "prompt" not in text):
                block.timings[name] = (float(m["ms"]), int(m["n"]))
                break
        if m := _DRAFT.search(text):
            block.draft = (int(m["gen"]), int(m["acc"]), float(m["len"]) if m["len"] else None)
        if m := _RELEASE.search(text):
            block.release = (int(m["n"]), m["trunc"] != "0")
        if "total" in block.timings and block.release is not None and self._settled(block, text):
            done += self._finish(key)
        return done

    @staticmethod
    def _settled(block: _Block, text: str) -> bool:
        # timings before release (this build): the release ends the block; release first: the
        # draft line may follow the totals, so the block ends at the draft line or the next task
        return block.draft is not None or "stop processing" in text

    def flush(self) -> list[LoggedRequest]:
        """Every block that has its totals, as it stands (the log ended)."""
        return [r for key in list(self._open) for r in self._finish(key)]

    def _finish(self, key: tuple[int, int]) -> list[LoggedRequest]:
        block = self._open.pop(key)
        t = block.timings
        if "total" not in t or "eval" not in t:
            return []  # a block cut by a rotation, or a task that never ran
        prompt_ms, prompt_n = t.get("prompt", (0.0, 0))
        draft_n, accepted, mean_len = block.draft if block.draft else (None, None, None)
        context, truncated = block.release if block.release else (None, False)
        return [
            LoggedRequest(
                slot_id=key[0],
                task_id=key[1],
                prompt_tokens=prompt_n,
                prompt_ms=prompt_ms,
                generated_tokens=t["eval"][1],
                eval_ms=t["eval"][0],
                total_ms=t["total"][0],
                draft_n=draft_n,
                draft_n_accepted=accepted,
                mean_len=mean_len,
                context_tokens=context,
                truncated=truncated,
                stamp_s=block.stamp_s,
            )
        ]


def parse_text(text: str) -> list[LoggedRequest]:
    """Every request logged in `text` (a whole capture), in the order they finished."""
    parser = LogParser()
    out = [r for line in text.splitlines() for r in parser.feed(line)]
    return out + parser.flush()
