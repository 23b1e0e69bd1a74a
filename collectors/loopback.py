"""A lighter transport for a poll's page reads from a server on this machine: HTTP/1.1 GETs on
kept-alive asyncio connections, without httpcore's machinery.

httpx's own transport (httpcore, h11, anyio) costs about 1 ms of CPU for each page a poll reads
(four a second from a llama-server), the largest part of what `spectop export` spent; this one
reads the same page for about a third of that (tests/bench/bench_page_read.py). It is the poll client's transport
(collectors/http.py): a GET to a loopback `http://` origin is read here, anything else (another
host, https, another method) goes to httpx's transport. An answer's body is framed as HTTP/1.1
says (Content-Length, chunked, or until the server closes) and handed on as it arrives, so the
caller's bounds on size and time still apply; a kept-alive connection the server closed while idle
is tried once more on a new one, as httpcore does; failures are httpx's exceptions, so
collectors/http.py tells them apart the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from collectors.http_framing import (
    READ_BYTES,
    chunked,
    empty,
    length_of,
    parse_head,
    sized,
    timed,
    until_close,
)

IDLE_PER_ORIGIN = 8  # kept-alive connections kept per server: a poll reads a few pages at once
Origin = tuple[str, int]


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def page_target(url: str, params: Mapping[str, str] | None) -> tuple[Origin, bytes, bytes] | None:
    """A loopback http:// URL's origin, Host header and request target; None for any other URL
    (another host, https, a password in it, characters that need encoding)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "http" or parts.username is not None or not is_loopback(host):
        return None
    query = "&".join(q for q in (parts.query, urlencode(params) if params else "") if q)
    target = (parts.path or "/") + ("?" + query if query else "")
    if not target.isascii() or not target.isprintable() or " " in target:
        return None
    return (host, parts.port or 80), parts.netloc.encode(), target.encode()


def _head(lines: list[bytes]) -> bytes:
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Stale(Exception):
    """A kept-alive connection closed by the server before it answered."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.loop = asyncio.get_running_loop()  # a connection serves only the loop that made it

    def close(self) -> None:
        if not self.loop.is_closed():  # a closed loop cannot: its socket is closed when collected
            self.writer.close()


@dataclass(frozen=True, slots=True)
class Sent:
    """A request written on `connection`, its answer not yet read."""

    connection: _Connection
    origin: Origin
    head: bytes
    reused: bool  # a kept-alive connection: the server may have closed it while idle

    def abandon(self) -> None:
        """Its answer will not be read: the connection cannot serve another request."""
        self.connection.close()


async def _put(sent: Sent, timeouts: dict[str, Any], request: httpx.Request | None) -> None:
    writer = sent.connection.writer
    with _failures(sent, request):
        writer.write(sent.head)
        if writer.transport.get_write_buffer_size():  # a request is small: seldom
            await timed(writer.drain(), timeouts.get("write"), httpx.WriteTimeout, request)


async def _fresh(
    origin: Origin, head: bytes, timeouts: dict[str, Any], request: httpx.Request | None
) -> Sent:
    """`head` written on a new connection to `origin`."""
    sent = Sent(await _connect(origin, request, timeouts.get("connect")), origin, head, reused=False)
    await _put(sent, timeouts, request)
    return sent


@contextmanager
def _failures(sent: Sent, request: httpx.Request | None) -> Iterator[None]:
    """A failure writing a request or reading an answer's head closes the connection and is
    httpx's; a kept-alive connection that ended before any answer is `_Stale` (tried again on a
    new one)."""
    try:
        yield
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        sent.abandon()
        if sent.reused and not getattr(exc, "partial", b""):
            raise _Stale from exc
        raise httpx.RemoteProtocolError(f"server disconnected: {exc}", request=request) from exc
    except asyncio.LimitOverrunError as exc:
        sent.abandon()
        raise httpx.RemoteProtocolError("answer's header too long", request=request) from exc
    except BaseException:
        sent.abandon()
        raise


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer's head, and its body as it arrives (read it whole, then `stream.aclose()`)."""

    status: int
    headers: list[tuple[bytes, bytes]]
    stream: _Body
    version: bytes
    reason: bytes
    encoded: bool  # a Content-Encoding: the body needs httpx's decoders (`response()`)

    def response(self) -> httpx.Response:
        return httpx.Response(
            self.status,
            headers=self.headers,
            stream=self.stream,
            extensions={"http_version": self.version, "reason_phrase": self.reason},
        )


class LoopbackTransport(httpx.AsyncBaseTransport):
    """GETs to loopback http:// origins here, everything else to `fallback`."""

    def __init__(self, fallback: httpx.AsyncBaseTransport) -> None:
        self._fallback = fallback
        self._idle: dict[Origin, list[_Connection]] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if request.method != "GET" or url.scheme != "http" or not is_loopback(url.host):
            return await self._fallback.handle_async_request(request)
        lines = [b"GET " + url.raw_path + b" HTTP/1.1"]
        lines += [name + b": " + value for name, value in request.headers.raw]
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        answer = await self._send((url.host, url.port or 80), _head(lines), timeouts, request)
        return answer.response()

    async def open_answer(
        self, url: str, params: Mapping[str, str] | None, headers: httpx.Headers, timeouts: dict[str, Any]
    ) -> Answer | None:
        """A GET of a loopback http:// `url` sent here directly, without the client's own request
        building (URL parsing, cookies, auth: most of what is left of a page read's cost), its answer
        not yet an httpx.Response: a poll reads its body straight from `stream` and makes the one
        Response it keeps. Its failures carry no request (the caller adds it). None for any other URL."""
        sent = await self.send(url, params, headers, timeouts)
        return None if sent is None else await self.answer(sent, timeouts)

    async def send(
        self, url: str, params: Mapping[str, str] | None, headers: httpx.Headers, timeouts: dict[str, Any]
    ) -> Sent | None:
        """The first half of `open_answer`: the GET written on a connection of its own, its answer
        left for `answer` (or the connection closed with `Sent.abandon`). A poll writes all its
        requests before it reads: the server answers them at once, without a task per page."""
        target = page_target(url, params)
        if target is None:
            return None
        origin, host, path = target
        lines = [b"GET " + path + b" HTTP/1.1", b"Host: " + host]
        lines += [name + b": " + value for name, value in headers.raw if name.lower() != b"host"]
        return await self._write(origin, _head(lines), timeouts, None)

    async def answer(
        self, sent: Sent, timeouts: dict[str, Any], request: httpx.Request | None = None
    ) -> Answer:
        """The answer to `sent`'s request; a kept-alive connection the server had closed while idle
        is tried once more, on a new one."""
        try:
            return await self._read_answer(sent, timeouts, request)
        except _Stale:
            again = await _fresh(sent.origin, sent.head, timeouts, request)
            return await self._read_answer(again, timeouts, request)

    async def _send(
        self, origin: Origin, head: bytes, timeouts: dict[str, Any], request: httpx.Request | None
    ) -> Answer:
        return await self.answer(await self._write(origin, head, timeouts, request), timeouts, request)

    async def _write(
        self, origin: Origin, head: bytes, timeouts: dict[str, Any], request: httpx.Request | None
    ) -> Sent:
        idle = self._idle.get(origin, [])
        loop = asyncio.get_running_loop()
        while idle:
            kept = idle.pop()
            if kept.loop is not loop:  # made under an earlier asyncio.run: that loop is gone
                continue
            if kept.reader.at_eof() or kept.writer.is_closing():  # the server closed it meanwhile
                kept.close()
                continue
            sent = Sent(kept, origin, head, reused=True)
            try:
                await _put(sent, timeouts, request)
                return sent
            except _Stale:
                break  # closed by the server while idle: once more, on a new connection
        return await _fresh(origin, head, timeouts, request)

    async def _read_answer(
        self, sent: Sent, timeouts: dict[str, Any], request: httpx.Request | None
    ) -> Answer:
        connection, read_s = sent.connection, timeouts.get("read")
        with _failures(sent, request):
            head = await timed(connection.reader.readuntil(b"\r\n\r\n"), read_s, httpx.ReadTimeout, request)
            version, status, reason, headers = parse_head(head, request)  # a broken head closes it too
        fields = {name.lower(): value for name, value in headers}
        keep_alive = version == b"HTTP/1.1" and fields.get(b"connection", b"").lower() != b"close"
        if status < 200 or status in (204, 304):
            body: AsyncIterator[bytes] = empty()
        elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = chunked(connection.reader, read_s, request)
        elif b"content-length" in fields:
            body = sized(connection.reader, length_of(fields[b"content-length"], request), read_s, request)
        else:
            body, keep_alive = until_close(connection.reader, read_s, request), False
        stream = _Body(body, connection, self._idle.setdefault(sent.origin, []) if keep_alive else None)
        return Answer(status, headers, stream, version, reason, b"content-encoding" in fields)

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
        await self._fallback.aclose()


class _Body(httpx.AsyncByteStream):
    """The answer's body as it arrives; its connection goes back to the idle ones once read whole."""

    def __init__(
        self, body: AsyncIterator[bytes], connection: _Connection, idle: list[_Connection] | None
    ) -> None:
        self._body, self._connection, self._idle, self._done = body, connection, idle, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._body:
                yield chunk
        except BaseException:
            self._connection.close()
            raise
        self._done = True

    async def aclose(self) -> None:
        if self._done and self._idle is not None and len(self._idle) < IDLE_PER_ORIGIN:
            self._idle.append(self._connection)
        else:
            self._connection.close()


async def _connect(origin: Origin, request: httpx.Request | None, connect_s: float | None) -> _Connection:
    try:
        reader, writer = await timed(
            asyncio.open_connection(*origin, limit=READ_BYTES), connect_s, httpx.ConnectTimeout, request
        )
    except OSError as exc:
        raise httpx.ConnectError(str(exc), request=request) from exc
    return _Connection(reader, writer)
