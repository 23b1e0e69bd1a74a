"""What every server dialect's collector shares: one client, the previous poll, poll = fetch + derive."""

from __future__ import annotations

from typing import Any

import httpx

from collectors.http import make_client
from collectors.servers.snapshot import ServerSnapshot


class PolledCollector:
    """Subclasses implement `fetch()` (never raising for HTTP trouble) and `derive(prev, raw)`."""

    backend = ""

    def __init__(
        self,
        url: str,
        client: httpx.AsyncClient | None = None,
        api_key: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._client = client or make_client(api_key)
        self._prev: Any = None

    async def fetch(self) -> Any:
        raise NotImplementedError

    def derive(self, prev: Any, raw: Any) -> ServerSnapshot:
        raise NotImplementedError

    def forget(self) -> None:
        """Drop what is read once per server start (identity, config); called after failures and restarts."""

    async def poll(self) -> ServerSnapshot:
        """One snapshot, with window figures against the previous successful poll."""
        raw = await self.fetch()
        snapshot = self.derive(self._prev, raw)
        if raw.status == "ok":
            self._prev = raw
        if raw.status != "ok" or snapshot.restarted:
            self.forget()
        return snapshot

    async def aclose(self) -> None:
        await self._client.aclose()
