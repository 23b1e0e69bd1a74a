"""A collector that finds out which server answers, and keeps trying while nothing does.

It offers the same contract as a dialect's collector, so the dashboard, exporter and sweep need
not know whether the dialect is known yet: until it is, busy slots and counters read as None. A
detection that fails is a snapshot saying why ("unreachable" only when nothing connected).
"""

from __future__ import annotations

import httpx

from collectors.errors import SpectopError
from collectors.http import make_client
from collectors.servers.answers import error_snapshot
from collectors.servers.base import ServerCollector, WindowCounters
from collectors.servers.registry import detect, open_collector
from collectors.servers.snapshot import ServerSnapshot


class AutoCollector:
    """Detects the dialect on first contact, then polls through that dialect's collector."""

    def __init__(self, url: str, api_key: str | None = None, client: httpx.AsyncClient | None = None) -> None:
        self.url = url.rstrip("/")
        self._client = client or make_client(api_key)
        self._inner: ServerCollector | None = None
        self.backend = "unknown"  # until detected; snapshots of a failed detection say the same

    async def poll(self) -> ServerSnapshot:
        if self._inner is None:
            try:
                self.backend = await detect(self.url, self._client)
            except SpectopError as exc:
                return error_snapshot(self.url, "unknown", exc)
            self._inner = open_collector(self.url, self.backend, client=self._client)
        return await self._inner.poll()

    async def busy_slots(self) -> int | None:
        return await self._inner.busy_slots() if self._inner is not None else None

    async def window_counters(self) -> WindowCounters | None:
        return await self._inner.window_counters() if self._inner is not None else None

    async def aclose(self) -> None:
        await self._client.aclose()
