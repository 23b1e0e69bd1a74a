"""The capture proxy's forwarding: an ASGI app that sends every request on to the watched server
unchanged and hands each generation's record (collectors/requests/proxy_record.py) to a callback.

Why ASGI on uvicorn with an httpx client: httpx is spectop's client already, and uvicorn is a
small, well-kept server on h11 (which httpx brings anyway); aiohttp would add a second HTTP stack.

Pitfalls handled:
- Unchanged: the method, path, query, body and end-to-end headers (Authorization included) go to
  the server as the client sent them; the answer's status, headers and raw bytes come back as the
  server sent them (still compressed if it compressed them), each chunk forwarded as it arrives,
  never buffered. Hop-by-hop headers are the connection's own and are not forwarded (RFC 9110
  §7.6.1). The upstream client adds no headers of its own: no User-Agent, no Accept-Encoding that
  would have the server compress an answer the client did not ask compressed.
- Failure: a server that cannot be reached is a 502, one that accepts but does not answer in
  `CONNECT_S` a 504, each with a one-line JSON error naming the server (what a reverse proxy
  answers; the client without the proxy would have got no HTTP answer at all). A server that hangs
  up mid-answer ends the client's answer there too. A client that goes away cancels the upstream
  request at once, so the server stops generating and frees its slot.
- No read timeout upstream: a long prefill or a slow stream is the client's to give up on, as it
  would be without the proxy.
- Nothing here logs or records a header: the API key passes through and is never kept.
- Not a relay: every request goes to `--server`'s host and port, whatever its target says; a target
  that is not `/path?query` (absolute-form, authority-form, `@host:port/…`) is a 400.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from collectors.http import make_client
from collectors.requests.proxy_record import Capture, recorded_route
from collectors.requests.record import RequestRecord

CONNECT_S = 10.0
PROXY_TIMEOUT = httpx.Timeout(CONNECT_S, read=None, write=None, pool=None)
MAX_REQUEST_BYTES = 256 << 20  # a request body larger than any context window; past it a 413
PREFIX_BYTES = 1 << 20  # of a request body, kept for its record (the `model` asked for)
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def upstream_client() -> httpx.AsyncClient:
    """spectop's client (collectors/http.py), without a timeout on reads and without default headers."""
    client = make_client(None, PROXY_TIMEOUT)
    # httpx's setter puts its defaults back (Accept, Accept-Encoding, Connection, User-Agent):
    # each is removed, or a client that sent none would get gzip it did not ask for
    for name in list(client.headers):
        del client.headers[name]
    return client


def _end_to_end(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    named = {v.decode("latin-1").strip().lower() for k, v in headers if k.lower() == b"connection"}
    return [(k, v) for k, v in headers if k.lower().decode("latin-1") not in HOP_BY_HOP | named]


class CaptureProxy:
    """Forward to `server_url`; `on_record` gets each generation's record, on the proxy's loop."""

    def __init__(
        self,
        server_url: str,
        on_record: Callable[[RequestRecord], None],
        *,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.server_url = server_url.rstrip("/")
        self._base = httpx.URL(self.server_url)
        self.on_record = on_record
        self.client = client or upstream_client()
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return  # served with lifespan off; nothing to start
        url = self.upstream_url(scope)
        if url is None:
            await _error(send, 400, "spectop proxy forwards origin-form request targets only (/path?query)")
            return
        first = await receive()
        if first["type"] == "http.disconnect":
            return
        if _declared_length(scope["headers"]) > MAX_REQUEST_BYTES:
            await _error(send, 413, f"request body larger than {MAX_REQUEST_BYTES >> 20} MB")
            return
        upload = Upload(receive, first)
        method, path = scope["method"], scope["path"]
        capture = Capture(self.server_url, path, self.clock(), b"") if recorded_route(method, path) else None
        request = self.client.build_request(
            method, url, headers=_end_to_end(scope["headers"]), content=upload.content()
        )
        forward = asyncio.ensure_future(self._forward(request, send, capture, upload))
        gone = asyncio.ensure_future(_disconnected(receive, upload.finished))
        await asyncio.wait({forward, gone}, return_when=asyncio.FIRST_COMPLETED)
        error = None
        if not forward.done() or upload.client_gone:  # the client went away: stop the server's work on it
            forward.cancel()
            error = "client disconnected"
        gone.cancel()
        broken: ConnectionAbortedError | None = None
        try:
            error = await forward or error
        except asyncio.CancelledError:
            pass
        except ConnectionAbortedError as exc:
            broken, error = exc, str(exc)
        if capture is not None:
            capture.asked(upload.prefix)  # the model it asked for (the answer's own, where it named one)
            self.on_record(capture.record(self.clock(), error))
        if broken is not None:
            raise broken  # the server closes the client's connection: its answer is incomplete

    def upstream_url(self, scope: Scope) -> httpx.URL | None:
        """The server's URL for this request: `--server`'s scheme, host and port always, the request
        target's path and query under its base path; None for a target that is not origin-form.

        Why not join them as text: `GET @127.0.0.1:9999/x` would then read as userinfo and send the
        request to another port (an open relay); absolute-form (`GET http://host/x`) and
        authority-form targets are a forward proxy's, which this is not."""
        raw_path = scope.get("raw_path") or scope["path"].encode()
        if not raw_path.startswith(b"/"):
            return None
        query = scope.get("query_string", b"")
        target = self._base.raw_path.rstrip(b"/") + raw_path + (b"?" + query if query else b"")
        try:
            url = self._base.copy_with(raw_path=target)
        except httpx.InvalidURL:
            return None
        return url if (url.scheme, url.host, url.port) == self._origin else None

    @property
    def _origin(self) -> tuple[str, str, int | None]:
        return self._base.scheme, self._base.host, self._base.port

    async def _forward(
        self, request: httpx.Request, send: Send, capture: Capture | None, upload: Upload
    ) -> str | None:
        """Send the request and pass the answer back; a broken exchange's error, else None."""
        try:
            response = await self.client.send(request, stream=True)
        except BodyTooLarge:
            await _error(send, 413, f"request body larger than {MAX_REQUEST_BYTES >> 20} MB")
            return "request body too large"
        except ClientGone:
            return "client disconnected"
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            await _error(send, 502, f"spectop proxy cannot reach {self.server_url} ({type(exc).__name__})")
            return f"cannot reach {self.server_url}"
        except httpx.TimeoutException:
            await _error(send, 504, f"spectop proxy: {self.server_url} did not answer")
            return f"{self.server_url} did not answer"
        except httpx.HTTPError as exc:
            await _error(send, 502, f"spectop proxy: {self.server_url} broke off ({type(exc).__name__})")
            return f"{self.server_url} broke off ({type(exc).__name__})"
        try:
            headers = _end_to_end(response.headers.raw)
            await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
            if capture is not None:
                h = response.headers
                capture.start(response.status_code, h.get("content-type", ""), h.get("content-encoding", ""))
            async for chunk in response.aiter_raw():
                t_s = self.clock()  # on arrival, before forwarding: the client's own stamp, less the hop
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if capture is not None:
                    capture.chunk(t_s, chunk)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return None
        except httpx.HTTPError as exc:
            # the server hung up mid-answer: end the client's answer there too (the server closes
            # the connection, which tells the client its answer is incomplete)
            raise ConnectionAbortedError(f"{self.server_url} broke off ({type(exc).__name__})") from None
        finally:
            await response.aclose()


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


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int:
    """The body's Content-Length as the client declared it; 0 when it did not (or not as a number)."""
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


async def _disconnected(receive: Receive, body_read: asyncio.Event) -> None:
    """Returns when the client has gone (once its body is read, only a disconnect comes)."""
    await body_read.wait()
    while (await receive())["type"] != "http.disconnect":
        pass


async def _error(send: Send, status: int, message: str) -> None:
    """A one-line JSON error in the OpenAI shape the servers themselves use."""
    kind = {400: "bad_request", 502: "bad_gateway", 504: "gateway_timeout"}.get(status, "proxy_error")
    body = json.dumps({"error": {"code": status, "message": message, "type": kind}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
