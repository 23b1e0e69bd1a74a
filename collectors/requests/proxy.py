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
- Not a relay: every request goes to `--server`'s host and port (routing: to `--plain`'s or
  `--draft`'s, collectors/requests/router.py), whatever its target says; a target that is not
  `/path?query` (absolute-form, authority-form, `@host:port/…`) is a 400.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, MutableMapping
from typing import Any

import httpx

from collectors.http import make_client
from collectors.requests.proxy_body import (
    MAX_REQUEST_BYTES,
    BodyTooLarge,
    ClientGone,
    Receive,
    Send,
    Upload,
    declared_length,
    disconnected,
    error_answer,
)
from collectors.requests.proxy_record import Capture, recorded_route
from collectors.requests.record import RequestRecord
from collectors.requests.router import DRAFT, BatchRouter, Choice, RoutePlan

CONNECT_S = 10.0
PROXY_TIMEOUT = httpx.Timeout(CONNECT_S, read=None, write=None, pool=None)
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)
Scope = MutableMapping[str, Any]


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
    """Forward to `server_url` (or where `router` says); `on_record` gets each generation's record,
    on the proxy's loop."""

    def __init__(
        self,
        server_url: str,
        on_record: Callable[[RequestRecord], None],
        *,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
        router: BatchRouter | None = None,
    ) -> None:
        self.server_url = server_url.rstrip("/")
        self.on_record = on_record
        self.client = client or upstream_client()
        self.clock = clock
        self.router = router

    def _target(self, choice: Choice | None) -> str:
        return (
            self.server_url if self.router is None or choice is None else self.router.plan.url_of(choice.name)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return  # served with lifespan off; nothing to start
        if self.upstream_url(scope, self.server_url) is None:
            await error_answer(
                send, 400, "spectop proxy forwards origin-form request targets only (/path?query)"
            )
            return
        first = await receive()
        if first["type"] == "http.disconnect":
            return
        if declared_length(scope["headers"]) > MAX_REQUEST_BYTES:
            await error_answer(send, 413, f"request body larger than {MAX_REQUEST_BYTES >> 20} MB")
            return
        upload = Upload(receive, first)
        method, path = scope["method"], scope["path"]
        capture = Capture(self.server_url, path, self.clock(), b"") if recorded_route(method, path) else None
        exchange = Exchange(scope, upload, capture)
        if self.router is not None:  # a generation joins the batch; a page is the drafting server's
            exchange.choice = self.router.choose() if capture else Choice(DRAFT, 0)
            exchange.counted = capture is not None
            if exchange.counted:
                self.router.started(exchange.choice.name)  # counted now: the next arrival sees it
        try:
            await self._exchange(send, receive, exchange)
        finally:
            self._release(exchange)

    def _release(self, exchange: Exchange) -> None:
        """The request leaves the live batch (once): as its answer ends, or as it fails."""
        if self.router is not None and exchange.choice is not None and exchange.counted:
            exchange.counted = False
            self.router.finished(exchange.choice.name)

    async def _exchange(self, send: Send, receive: Receive, exchange: Exchange) -> None:
        upload, capture = exchange.upload, exchange.capture
        forward = asyncio.ensure_future(self._forward(send, exchange))
        gone = asyncio.ensure_future(disconnected(receive, upload.finished))
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
            if exchange.choice is not None:
                capture.server_url, capture.tag = self._target(exchange.choice), exchange.choice.tag
            self.on_record(capture.record(self.clock(), error))
        if broken is not None:
            raise broken  # the server closes the client's connection: its answer is incomplete

    def upstream_url(self, scope: Scope, server_url: str) -> httpx.URL | None:
        """The server's URL for this request: `server_url`'s scheme, host and port always, the
        request target's path and query under its base path; None for a target that is not
        origin-form.

        Why not join them as text: `GET @127.0.0.1:9999/x` would then read as userinfo and send the
        request to another port (an open relay); absolute-form (`GET http://host/x`) and
        authority-form targets are a forward proxy's, which this is not."""
        base = httpx.URL(server_url)
        raw_path = scope.get("raw_path") or scope["path"].encode()
        if not raw_path.startswith(b"/"):
            return None
        query = scope.get("query_string", b"")
        target = base.raw_path.rstrip(b"/") + raw_path + (b"?" + query if query else b"")
        try:
            url = base.copy_with(raw_path=target)
        except httpx.InvalidURL:
            return None
        return url if (url.scheme, url.host, url.port) == (base.scheme, base.host, base.port) else None

    async def _open(self, exchange: Exchange) -> httpx.Response:
        """The server's answer's head; routed, from the other server when the chosen one refuses
        the connection and none of the body was sent yet (BothDown when it refuses too)."""
        scope, choice = exchange.scope, exchange.choice
        while True:
            url = self.upstream_url(scope, self._target(choice))
            if url is None:  # checked against --server's origin already: the routed one's is alike
                raise httpx.UnsupportedProtocol(f"no URL under {self._target(choice)}")
            headers, body = _end_to_end(scope["headers"]), exchange.upload.content()
            request = self.client.build_request(scope["method"], url, headers=headers, content=body)
            try:
                return await self.client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                if self.router is None or choice is None or exchange.upload.sent_any:
                    raise
                self.router.mark_down(choice.name)
                if choice.note:  # this was the fallback already
                    raise BothDown(self.router.plan) from None
                if exchange.counted:
                    self.router.finished(choice.name)
                choice = exchange.choice = self.router.other(choice)
                if exchange.counted:
                    self.router.started(choice.name)

    async def _forward(self, send: Send, exchange: Exchange) -> str | None:
        """Send the request and pass the answer back; a broken exchange's error, else None."""
        capture, server_url = exchange.capture, self._target(exchange.choice)
        try:
            response = await self._open(exchange)
        except BodyTooLarge:
            await error_answer(send, 413, f"request body larger than {MAX_REQUEST_BYTES >> 20} MB")
            return "request body too large"
        except ClientGone:
            return "client disconnected"
        except BothDown as exc:
            await error_answer(send, 502, f"spectop proxy cannot reach {exc}")
            return f"cannot reach {exc}"
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            await error_answer(send, 502, f"spectop proxy cannot reach {server_url} ({type(exc).__name__})")
            return f"cannot reach {server_url}"
        except httpx.TimeoutException:
            await error_answer(send, 504, f"spectop proxy: {server_url} did not answer")
            return f"{server_url} did not answer"
        except httpx.HTTPError as exc:
            await error_answer(send, 502, f"spectop proxy: {server_url} broke off ({type(exc).__name__})")
            return f"{server_url} broke off ({type(exc).__name__})"
        server_url = self._target(exchange.choice)  # the fallback's, where the chosen one was down
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
            self._release(exchange)  # before the client learns it ended: its next request sees it gone
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return None
        except httpx.HTTPError as exc:
            # the server hung up mid-answer: end the client's answer there too (the server closes
            # the connection, which tells the client its answer is incomplete)
            raise ConnectionAbortedError(f"{server_url} broke off ({type(exc).__name__})") from None
        finally:
            await response.aclose()


class Exchange:
    """One request on its way: its scope and body, its record, and (routed) the server it went to."""

    def __init__(self, scope: Scope, upload: Upload, capture: Capture | None) -> None:
        self.scope, self.upload, self.capture = scope, upload, capture
        self.choice: Choice | None = None
        self.counted = False  # in the router's live batch (a generation, until its answer ends)


class BothDown(Exception):
    """Routed: neither server accepts a connection."""

    def __init__(self, plan: RoutePlan) -> None:
        super().__init__(f"the drafting server {plan.draft_url} or the plain server {plan.plain_url}")
