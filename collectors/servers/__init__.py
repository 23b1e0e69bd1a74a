"""Server dialects behind one contract (`base.ServerCollector`), found and opened through `registry`."""

from __future__ import annotations

from collectors.servers.base import ServerCollector
from collectors.servers.registry import check_url, default_route, detect, dialect, open_collector
from collectors.servers.snapshot import ServerSnapshot

__all__ = [
    "ServerCollector",
    "ServerSnapshot",
    "check_url",
    "default_route",
    "detect",
    "dialect",
    "open_collector",
]
