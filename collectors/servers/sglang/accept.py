"""SGLang acceptance that always means accepted drafts over drafted tokens, whatever the version.

Pitfalls handled (collectors/docs/servers.md, SGLang): `sglang:spec_accept_rate` changed meaning. Over the
same last-40-iterations window, with A accepted drafts, F request-verifies (Σ batch size) and D
= `speculative_num_draft_tokens` (the root included), every version sets accept length
L = (A + F) / F (0.5.4 `managers/scheduler_metrics_mixin.py:70-71,255-257`; 0.5.10
`observability/scheduler_metrics_mixin.py:181-182,614-616`; 0.5.11 the same file `:192-193,528-530`),
but the rate is
- 0.5.4: (A + F) / (F × (speculative_num_steps + 1)) (`scheduler_metrics_mixin.py:258-266`), i.e. L / (steps + 1);
- 0.5.5 to 0.5.10: L / D, D falling back to steps + 1 (0.5.10 `scheduler_metrics_mixin.py:617-628`);
- 0.5.11 and later: A / (F × (D − 1)), D − 1 falling back to steps (0.5.11 `:531-544`): the acceptance.
So acceptance is derived from L and the verified width, (L − 1) / (D − 1), which every version
agrees on; without L it is the rate gauge where the version says it already is the acceptance, or
L recovered from an older rate × its own divisor; otherwise unknown, never the old meaning.
"""

from __future__ import annotations

import re
from typing import Any

NEW_MEANING = (0, 5, 11)  # from this release spec_accept_rate is accepted / drafted


def version_tuple(version: Any) -> tuple[int, int, int] | None:
    """(0, 5, 10) from "0.5.10.post1"; None when it is not text that starts with three numbers."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _positive_int(info: dict[str, Any] | None, key: str) -> int | None:
    value = (info or {}).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def steps(info: dict[str, Any] | None) -> int | None:
    """The server's speculative_num_steps, the draft length a schedule sets (sglang/schedule.py)."""
    return _positive_int(info, "speculative_num_steps")


def drafted_per_verify(width: int | None, info: dict[str, Any] | None) -> int | None:
    """Draft tokens each request verifies per step: width − 1, else speculative_num_steps."""
    if width is not None and width > 1:
        return width - 1
    return _positive_int(info, "speculative_num_steps")


def _old_divisor(version: tuple[int, int, int], width: int | None, info: dict[str, Any] | None) -> int | None:
    """What a release before 0.5.11 divided L by to make its rate."""
    steps = _positive_int(info, "speculative_num_steps")
    if version < (0, 5, 5):
        return steps + 1 if steps else None
    return width if width and width > 1 else (steps + 1 if steps else None)


def acceptance(
    rate: float | None, length: float | None, width: int | None, info: dict[str, Any] | None
) -> float | None:
    """Accepted drafts over drafted tokens in the gauges' window; None when it cannot be told."""
    drafted = drafted_per_verify(width, info)
    if length is not None and length >= 1.0 and drafted:
        return (length - 1.0) / drafted
    version = version_tuple(info.get("version") if isinstance(info, dict) else None)
    if rate is None or version is None:
        return None
    if version >= NEW_MEANING:
        return rate
    divisor = _old_divisor(version, width, info)
    if not drafted or not divisor:
        return None
    return (rate * divisor - 1.0) / drafted
