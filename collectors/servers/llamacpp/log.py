"""llama-server's per-request log block: one `LoggedRequest` per finished task, keyed by slot and task.

llama-server (tools/server/server-context.cpp) logs each request as `slot <func>: id <slot> | task
<task> | <text>` lines (the prefix is `"slot %12.*s: id %2d | task %d | "`, the function name cut
to 12 characters, so `print_timing`): `launch_slot_` when it starts, `print_timing` with `prompt
eval time`, `eval time`, `total time` and, only when it drafted, `draft acceptance`, then
`release` with `stop processing`. Pitfalls handled: the prefix may carry an elapsed-time stamp
`M.SS.mmm.uuu` whose minutes field is unbounded, a level letter (`I`), colour escapes
(`--log-colors`) and a router's `[ port]` tag; several slots' lines interleave, so lines are
gathered per (slot, task); `print_timing` may come before or after `release` across builds, so a
block ends when it has both its totals and its release, or when the slot starts its next task; a
line cut by a rotation or a partial write is skipped, never a crash. Servers other than
llama-server log no such lines.

Older releases (the formats and the source lines they come from are in
tests/fixtures/llama-server-logs/older/, one capture each, built from the llama.cpp source that
llama-cpp-python's sdists vendor):
- up to about mid-2025 `print_timings` is one log call of several lines, so only its first line
  (empty after the prefix) has the slot prefix and the times are unprefixed continuation lines,
  owned by the slot line just before them; some releases start each with a carriage return;
  the draft line is `draft acceptance rate = R (A accepted / D generated)` (no `mean len`), and
  `release` says `n_past =` where newer builds say `n_tokens =`, and comes first;
- a build that loads a draft model but logs no draft line (llama.cpp early 2025) leaves each
  request's drafting unknown (`draft_unknown`), not zero, until the log shows a draft line;
- before the slot prefix (llama.cpp mid-2024) lines are `INFO [function] text | key=value ...`
  with the slot and task in `id_slot=` and `id_task=`, `generation eval time = T ms / N runs`, a
  total without tokens, and `slot released` (with `n_past=`) after the timings.
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
_LEGACY = re.compile(r"^\s*[A-Z]{3,4} \[\s*(?P<func>\w+)\] (?P<text>.*?) \|(?P<fields>(?: \w+=\S*)*)$")
_FIELD = re.compile(r" (?P<key>id_slot|id_task|n_past|truncated)=(?P<value>-?\d+|true|false)")
_PROMPT = re.compile(r"prompt eval time\s+=\s*(?P<ms>[\d.]+) ms /\s*(?P<n>\d+) tokens")
_EVAL = re.compile(r"^\s*(?:generation )?eval time\s+=\s*(?P<ms>[\d.]+) ms /\s*(?P<n>\d+) (?:tokens|runs)")
_TOTAL = re.compile(r"total time\s+=\s*(?P<ms>[\d.]+) ms(?: /\s*(?P<n>\d+) tokens)?")
_DRAFT = re.compile(
    r"draft acceptance(?: rate)? =\s*(?P<rate>[\d.]+)\s*\(\s*(?P<acc>\d+) accepted /\s*(?P<gen>\d+) generated\)"
    r"(?:,\s*mean len =\s*(?P<len>[\d.]+))?"
)
_RELEASE = re.compile(r"stop processing: n_(?:tokens|past) = (?P<n>\d+), truncated = (?P<trunc>\d+)")
# what an unprefixed line of a multi-line print_timings call starts with
_CONTINUATION = re.compile(r"^\s*(?:prompt eval time|eval time|total time|draft acceptance|graphs reused)\b")
_DRAFT_MODEL = "loading draft model"
# the HTTP thread's access line, which may land between a slot's timings and its draft line
_ACCESS = re.compile(r"(?:^|: )request: \S+ \S+ \S+ \d+\s*$")


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
    clean = _ANSI.sub("", line).strip("\r\n")
    m = _PREFIX.match(clean)
    if m is None:
        return _legacy_line(clean)
    stamp = None
    if m["min"] is not None:
        stamp = int(m["min"]) * 60 + int(m["sec"]) + int(m["ms"]) / 1e3 + int(m["us"]) / 1e6
    return LogLine(int(m["slot"]), int(m["task"]), m["func"].strip(), m["text"], stamp)


def _legacy_line(clean: str) -> LogLine | None:
    """A mid-2024 `INFO [function] text | key=value ...` line of a slot, else None."""
    m = _LEGACY.match(clean)
    if m is None:
        return None
    fields = {f["key"]: f["value"] for f in _FIELD.finditer(m["fields"])}
    if "id_slot" not in fields or "id_task" not in fields:
        return None
    text = m["text"]
    if text == "slot released" and "n_past" in fields:  # said as newer builds say it
        text = f"stop processing: n_past = {fields['n_past']}, truncated = {int(fields.get('truncated') == 'true')}"
    return LogLine(int(fields["id_slot"]), int(fields["id_task"]), m["func"], text, None)


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
    draft_unknown: bool = False  # a draft model is loaded and this build logs no draft counts


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
        self._last: tuple[int, int] | None = None  # the slot line a continuation line belongs to
        self._pending: tuple[int, int] | None = None  # released, timed, perhaps a draft line to come
        self._draft_model = False  # the log said a draft model was loaded
        self._draft_lines = False  # the log has shown a draft line: this build prints them

    def feed(self, line: str) -> list[LoggedRequest]:
        parsed = parse_line(line)
        if parsed is not None and parsed.task_id >= 0:
            key, text = (parsed.slot_id, parsed.task_id), parsed.text
            self._last = key
        else:
            clean = _ANSI.sub("", line).strip("\r\n")
            if not clean.strip() or _ACCESS.search(clean):
                return []  # a carriage return split off a continuation; another thread's access line
            if parsed is None and self._last is not None and _CONTINUATION.match(clean):
                key, text = self._last, clean
            else:
                self._last = None
                self._draft_model = self._draft_model or _DRAFT_MODEL in clean
                return self._settle_pending()
        done = self._settle_pending(key)
        if key not in self._open:
            # the slot's previous task is over, whatever it still lacked
            for other in [k for k in self._open if k[0] == key[0]]:
                done += self._finish(other)
        block = self._open.setdefault(key, _Block())
        if parsed is not None and parsed.stamp_s is not None:
            block.stamp_s = parsed.stamp_s
        for name, pattern in (("prompt", _PROMPT), ("eval", _EVAL), ("total", _TOTAL)):
            m = pattern.search(text)
            if m and (name != "eval" or "prompt" not in text):
                block.timings[name] = (float(m["ms"]), int(m["n"] or 0))
                break
        if m := _DRAFT.search(text):
            block.draft = (int(m["gen"]), int(m["acc"]), float(m["len"]) if m["len"] else None)
            self._draft_lines = True
        released = _RELEASE.search(text)
        if released:
            block.release = (int(released["n"]), released["trunc"] != "0")
        if "total" in block.timings and block.release is not None:
            # timings before release (this build): the release ends the block; release first:
            # a draft line may follow the totals, so the block ends at it or at the next other line
            if block.draft is not None or released:
                done += self._finish(key)
            else:
                self._pending = key
        return done

    def _settle_pending(self, key: tuple[int, int] | None = None) -> list[LoggedRequest]:
        """The pending block is over unless this line (of `key`) is its own."""
        pending, self._pending = self._pending, None
        if pending is None or pending == key:
            self._pending = pending
            return []
        return self._finish(pending) if pending in self._open else []

    def flush(self) -> list[LoggedRequest]:
        """Every block that has its totals, as it stands (the log ended)."""
        return [r for key in list(self._open) for r in self._finish(key)]

    def _finish(self, key: tuple[int, int]) -> list[LoggedRequest]:
        block = self._open.pop(key)
        if self._pending == key:
            self._pending = None
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
                draft_unknown=block.draft is None and self._draft_model and not self._draft_lines,
            )
        ]


def parse_text(text: str) -> list[LoggedRequest]:
    """Every request logged in `text` (a whole capture), in the order they finished."""
    parser = LogParser()
    out = [r for line in text.splitlines() for r in parser.feed(line)]
    return out + parser.flush()
