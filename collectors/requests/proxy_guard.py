"""The capture proxy's connections, bounded: uvicorn's HTTP/1.1 protocol (h11) with a deadline
for each request head and a cap on open connections.

Why: uvicorn waits for a request head as long as a peer likes, so 1,100 connections that never
finish a head used every file descriptor and left the proxy spinning (new requests timed out).
Here a connection that has no request under way must finish its head within `HEAD_TIMEOUT_S` of
its first byte (or of opening), and at most `MAX_CONNECTIONS` are open: when all are taken, the
longest-silent one without a request under way is closed for the new one (a client sends its head
at once, so it gets in while idle ones are cycled out); when every one is busy, the new one is.
Heads are at most 16 KB (h11's own bound).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None
        self.opened_s = time.monotonic()

    @property
    def idle(self) -> bool:
        """No request under way: waiting for a (first or next) head."""
        return self.cycle is None or self.cycle.response_complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            idle = [
                c for c in self.connections if isinstance(c, GuardedH11Protocol) and c.idle and c is not self
            ]
            if idle:
                min(idle, key=lambda c: c.opened_s).transport.close()
            else:
                transport.close()
                return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.idle:
            self._arm()  # part of a head: it must end in time (uvicorn's keep-alive closes a silent one)
        elif self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(HEAD_TIMEOUT_S, self._head_late)

    def _head_late(self) -> None:
        self._head_deadline = None
        if self.idle and not self.transport.is_closing():
            self.transport.close()
