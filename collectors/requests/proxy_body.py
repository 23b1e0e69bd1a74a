"""The capture proxy's client side: the request body passed on as it arrives (`Upload`), the
client's disconnect, and the proxy's own one-line JSON errors (collectors/requests/proxy.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

MAX_REQUEST_BYTES = 256 << 20  # a request body larger than any context window; past it a 413
PREFIX_BYTES = 1 << 20  # of a request body, kept for its record (the `model` asked for)
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class BodyTooLarge(Exception):
    """The client's body ran past `MAX_REQUEST_BYTES` while it was being passed on."""


class ClientGone(Exception):
    """The client hung up while its body was being passed on."""


class Upload:
    """The client's request body, passed on to the server as it arrives (never held whole: four
    clients sending 250 MB each would otherwise hold 1 GB); its first `PREFIX_BYTES` are kept for
    the record (the request's `model`)."""

    def __init__(self, receive: Receive, first: MutableMapping[str, Any]) -> None:
        self._receive = receive
        self._first: bytes = first.get("body", b"")
        self.sent_any = False  # a piece of a body in pieces went upstream: it cannot be sent again
        self._more = bool(first.get("more_body", False))
        self.prefix = self._first[:PREFIX_BYTES]
        self.finished = asyncio.Event()  # the body is all read: receive() now only says disconnect
        self.client_gone = False
        if not self._more:
            self.finished.set()

    def content(self) -> bytes | AsyncIterator[bytes]:
        """What httpx sends: the body itself when it came in one piece, else a stream of its pieces."""
        return self._first if not self._more else self._pieces()

    async def _pieces(self) -> AsyncIterator[bytes]:
        size = len(self._first)
        try:
            self.sent_any = True
            yield self._first
            more = self._more
            while more:
                message = await self._receive()
                if message["type"] == "http.disconnect":
                    self.client_gone = True
                    raise ClientGone
                part = message.get("body", b"")
                size += len(part)
                if size > MAX_REQUEST_BYTES:
                    raise BodyTooLarge
                if len(self.prefix) < PREFIX_BYTES:
                    self.prefix += part[: PREFIX_BYTES - len(self.prefix)]
                more = message.get("more_body", False)
                yield part
        finally:
            self.finished.set()


def declared_length(headers: list[tuple[bytes, bytes]]) -> int:
    """The body's Content-Length as the client declared it; 0 when it did not (or not as a number)."""
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


async def disconnected(receive: Receive, body_read: asyncio.Event) -> None:
    """Returns when the client has gone (once its body is read, only a disconnect comes)."""
    await body_read.wait()
    while (await receive())["type"] != "http.disconnect":
        pass


async def error_answer(send: Send, status: int, message: str) -> None:
    """A one-line JSON error in the OpenAI shape the servers themselves use."""
    kind = {400: "bad_request", 502: "bad_gateway", 504: "gateway_timeout"}.get(status, "proxy_error")
    body = json.dumps({"error": {"code": status, "message": message, "type": kind}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
