"""A collector that finds out which server answers, and keeps trying while nothing does."""

from __future__ import annotations

import time

import httpx

from collectors.errors import SpectopError
from collectors.http import make_client
from collectors.servers import detect
from collectors.servers.llamacpp import LlamaCppCollector
from collectors.servers.snapshot import ServerSnapshot


def _make(url: str, backend: str, client: httpx.AsyncClient):
    try:
        from collectors.servers import open_collector  # vLLM and SGLang, where available
    except ImportError:
        return LlamaCppCollector(url, client=client)
    return open_collector(url, backend, client=client)


class AutoCollector:
    """Detects the dialect on first contact (and again after failures), then polls through it."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        self.url = url.rstrip("/")
        self._client = make_client(api_key)
        self._inner = None
        self.backend: str | None = None

    async def poll(self) -> ServerSnapshot:
        if self._inner is None:
            try:
                self.backend = await detect(self.url, self._client)
            except SpectopError as exc:
                status = "unreachable" if "cannot reach" in exc.what else "error"
                return ServerSnapshot(
                    url=self.url,
                    backend="unknown",
                    taken_at_s=time.monotonic(),
                    status=status,
                    error=exc.what,
                    fix=exc.fix,
                )
            self._inner = _make(self.url, self.backend, self._client)
        return await self._inner.poll()

    async def busy_slots(self) -> int | None:
        return await self._inner.busy_slots() if self._inner is not None else None

    async def aclose(self) -> None:
        await self._client.aclose()
