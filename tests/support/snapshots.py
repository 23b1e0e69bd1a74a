"""Server snapshots built by hand, for the tests of figures read over the rolling window."""

from __future__ import annotations

from typing import Any

from collectors.servers.snapshot import ServerSnapshot


def window_snapshot(t_s: float, **fields: Any) -> ServerSnapshot:
    """A successful llama.cpp poll at `t_s` closing a one-second window; `fields` say the rest
    (and may replace any of those)."""
    defaults = dict(url="u", backend="llama.cpp", taken_at_s=t_s, status="ok", window_s=1.0)
    return ServerSnapshot(**{**defaults, **fields})
