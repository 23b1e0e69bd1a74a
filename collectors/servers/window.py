"""A sweep window's server counters: one read of them (`WindowCounters`), and what the server counted
between two reads (`WindowDelta`), a count its rounded printing could swamp left unknown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.servers import rounding
from collectors.servers.series import as_int


@dataclass(frozen=True, slots=True)
class WindowCounters:
    """One read of a server's cumulative counters; two of them bracket a sweep window.

    None where the dialect has no such counter. `steps` counts every decode step after a
    request's first token (Eq. 4's steps), `drafted_steps` only the steps that drafted.
    `request_steps` / `decode_steps` give the requests the server advanced per decode step over
    the window: Σ requests over steps, and steps. `errors` says, by field name, how far a read
    may be from the server's count where the server printed it rounded (absent: exact).
    """

    tokens: float | None = None  # generated tokens
    drafted: float | None = None  # draft tokens proposed
    accepted: float | None = None  # draft tokens accepted
    steps: float | None = None  # every decode step after each request's first token
    drafted_steps: float | None = None  # steps that drafted
    request_steps: float | None = None
    decode_steps: float | None = None
    errors: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WindowDelta:
    """What the server counted between two `WindowCounters` reads; None where either lacks it.

    A count whose reads were rounded too coarsely to say anything about the window is None, not
    a number that looks exact; `tokens` is kept with the `tokens_tolerance` it may be off by, so
    a comparison with spectop's own count can allow for it.
    """

    tokens: int | None = None
    drafted: int | None = None
    accepted: int | None = None
    steps: int | None = None
    drafted_steps: int | None = None
    busy_per_decode: float | None = None  # requests per decode step over the window, not since start
    errors: Mapping[str, float] = field(default_factory=dict)  # how far each delta may be off

    @property
    def rounded(self) -> bool:
        """Some count came from reads the server printed rounded: the counts are approximate."""
        return any(
            self.errors.get(n, 0.0) > 0 for n in ("tokens", "drafted", "accepted", "steps", "drafted_steps")
        )

    @property
    def tokens_tolerance(self) -> int:
        """The whole tokens `tokens` may be off by (0 when exact)."""
        return rounding.tolerance(self.errors.get("tokens", 0.0))


def window_delta(before: WindowCounters | None, after: WindowCounters | None) -> WindowDelta:
    """The window's counts and its requests per decode step (None when no step was decoded)."""
    if before is None or after is None:
        return WindowDelta()
    errors: dict[str, float] = {}

    def grew(name: str) -> float | None:
        a, b = getattr(before, name), getattr(after, name)
        errors[name] = before.errors.get(name, 0.0) + after.errors.get(name, 0.0)
        return None if a is None or b is None else b - a

    def count(name: str) -> int | None:
        delta = grew(name)
        return as_int(delta) if rounding.trusted(delta, errors[name]) else None

    decodes, busy = grew("decode_steps"), grew("request_steps")
    per_decode = None
    if (
        busy is not None
        and decodes is not None
        and decodes > 0
        and rounding.trusted(busy, errors["request_steps"])
        and rounding.trusted(decodes, errors["decode_steps"])
    ):
        per_decode = busy / decodes
    counts = {name: count(name) for name in ("drafted", "accepted", "steps", "drafted_steps")}
    return WindowDelta(tokens=as_int(grew("tokens")), busy_per_decode=per_decode, errors=errors, **counts)
