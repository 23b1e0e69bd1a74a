"""Server dialects behind one contract (`base.ServerCollector`), found and opened through `registry`."""

from __future__ import annotations

from collectors.servers.base import Collector, ServerCollector, WindowCounters
from collectors.servers.registry import check_url, default_route, detect, dialect, open_collector
from collectors.servers.sglang_snapshot import SglangSnapshot
from collectors.servers.snapshot import ServerSnapshot

__all__ = [
    "Collector",
    "ServerCollector",
    "ServerSnapshot",
    "SglangSnapshot",
    "WindowCounters",
    "check_url",
    "default_route",
    "detect",
    "dialect",
    "open_collector",
]
