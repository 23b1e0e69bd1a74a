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
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

IDLE_PER_ORIGIN = 8  # kept-alive connections kept per server: a poll reads a few pages at once
READ_BYTES = 65536
SIZED_PART_BYTES = 1 << 20  # a body with a length is handed on in parts of this, so its bound applies
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

    async def open_page(
        self, url: str, params: Mapping[str, str] | None, headers: httpx.Headers, timeouts: dict[str, Any]
    ) -> httpx.Response | None:
        """A GET of a loopback http:// `url` sent here directly, without the client's own request
        building (URL parsing, cookies, auth: most of what is left of a page read's cost); its
        failures carry no request (the caller adds it). None for any other URL."""
        answer = await self.open_answer(url, params, headers, timeouts)
        return None if answer is None else answer.response()

    async def open_answer(
        self, url: str, params: Mapping[str, str] | None, headers: httpx.Headers, timeouts: dict[str, Any]
    ) -> Answer | None:
        """As `open_page`, the answer not yet an httpx.Response: a poll reads its body straight from
        `stream` and makes the one Response it keeps (a Response made here too, and its decoders
        and chunkers walked, were a fifth of a page read's CPU)."""
        target = page_target(url, params)
        if target is None:
            return None
        origin, host, path = target
        lines = [b"GET " + path + b" HTTP/1.1", b"Host: " + host]
        lines += [name + b": " + value for name, value in headers.raw if name.lower() != b"host"]
        return await self._send(origin, _head(lines), timeouts, None)

    async def _send(
        self, origin: Origin, head: bytes, timeouts: dict[str, Any], request: httpx.Request | None
    ) -> Answer:
        idle = self._idle.get(origin, [])
        loop = asyncio.get_running_loop()
        while idle:
            kept = idle.pop()
            if kept.loop is not loop:  # made under an earlier asyncio.run: that loop is gone
                continue
            if kept.reader.at_eof() or kept.writer.is_closing():  # the server closed it meanwhile
                kept.close()
                continue
            try:
                return await self._exchange(kept, head, origin, timeouts, True, request)
            except _Stale:
                break  # closed by the server while idle: once more, on a new connection
        connection = await _connect(origin, request, timeouts.get("connect"))
        return await self._exchange(connection, head, origin, timeouts, False, request)

    async def _exchange(
        self,
        connection: _Connection,
        head_out: bytes,
        origin: Origin,
        timeouts: dict[str, Any],
        reused: bool,
        request: httpx.Request | None,
    ) -> Answer:
        read_s = timeouts.get("read")
        try:
            connection.writer.write(head_out)
            if connection.writer.transport.get_write_buffer_size():  # a request is small: seldom
                await _timed(connection.writer.drain(), timeouts.get("write"), httpx.WriteTimeout, request)
            head = await _timed(connection.reader.readuntil(b"\r\n\r\n"), read_s, httpx.ReadTimeout, request)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            connection.close()
            if reused and not getattr(exc, "partial", b""):
                raise _Stale from exc
            raise httpx.RemoteProtocolError(f"server disconnected: {exc}", request=request) from exc
        except asyncio.LimitOverrunError as exc:
            connection.close()
            raise httpx.RemoteProtocolError("answer's header too long", request=request) from exc
        except BaseException:
            connection.close()
            raise
        version, status, reason, headers = _parse_head(head, request)
        fields = {name.lower(): value for name, value in headers}
        keep_alive = version == b"HTTP/1.1" and fields.get(b"connection", b"").lower() != b"close"
        if status < 200 or status in (204, 304):
            body: AsyncIterator[bytes] = _empty()
        elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = _chunked(connection.reader, read_s, request)
        elif b"content-length" in fields:
            body = _sized(connection.reader, _length(fields[b"content-length"], request), read_s, request)
        else:
            body, keep_alive = _until_close(connection.reader, read_s, request), False
        stream = _Body(body, connection, self._idle.setdefault(origin, []) if keep_alive else None)
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
        reader, writer = await _timed(
            asyncio.open_connection(*origin, limit=READ_BYTES), connect_s, httpx.ConnectTimeout, request
        )
    except OSError as exc:
        raise httpx.ConnectError(str(exc), request=request) from exc
    return _Connection(reader, writer)


async def _timed(
    awaitable: Any, seconds: float | None, error: type[httpx.TimeoutException], request: httpx.Request | None
) -> Any:
    # asyncio.timeout, not wait_for: a wait_for inside the caller's own (get_page's bound on the
    # whole page) can swallow its cancellation when both end together, and a trickling page is
    # then never cut off (Python 3.11); it also makes no task per read
    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(seconds):
                return await awaitable
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise error(f"no answer within {seconds} s", request=request) from None


def _parse_head(
    head: bytes, request: httpx.Request | None
) -> tuple[bytes, int, bytes, list[tuple[bytes, bytes]]]:
    status_line, *header_lines = head[:-4].split(b"\r\n")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise httpx.RemoteProtocolError(f"not an HTTP answer: {status_line[:80]!r}", request=request)
    headers = []
    for line in header_lines:
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            raise httpx.RemoteProtocolError(f"a broken header line: {line[:80]!r}", request=request)
        headers.append((name.strip(), value.strip()))
    return parts[0], int(parts[1]), parts[2] if len(parts) > 2 else b"", headers


def _length(value: bytes, request: httpx.Request | None) -> int:
    if not value.strip().isdigit():
        raise httpx.RemoteProtocolError(f"a broken Content-Length: {value[:40]!r}", request=request)
    return int(value)


async def _empty() -> AsyncIterator[bytes]:
    return
    yield b""  # an async generator that yields nothing


async def _read(awaitable: Any, read_s: float | None, request: httpx.Request | None) -> Any:
    """A read of the body, its failures as httpx's."""
    try:
        return await _timed(awaitable, read_s, httpx.ReadTimeout, request)
    except asyncio.IncompleteReadError as exc:
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=request
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise httpx.RemoteProtocolError("a line of the answer is too long", request=request) from exc
    except ConnectionError as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc


async def _sized(
    reader: asyncio.StreamReader, left: int, read_s: float | None, request: httpx.Request | None
) -> AsyncIterator[bytes]:
    while left > 0:  # a page in one read (each read is a task and a timer); a huge one in parts
        chunk = await _read(reader.readexactly(min(left, SIZED_PART_BYTES)), read_s, request)
        left -= len(chunk)
        yield chunk


async def _chunked(
    reader: asyncio.StreamReader, read_s: float | None, request: httpx.Request | None
) -> AsyncIterator[bytes]:
    while True:
        size = (await _read(reader.readuntil(b"\r\n"), read_s, request)).split(b";", 1)[0].strip()
        try:
            left = int(size, 16)
        except ValueError:
            raise httpx.RemoteProtocolError(f"a broken chunk size: {size[:40]!r}", request=request) from None
        if left == 0:
            while await _read(reader.readuntil(b"\r\n"), read_s, request) != b"\r\n":
                pass  # trailers
            return
        async for chunk in _sized(reader, left, read_s, request):
            yield chunk
        await _read(reader.readexactly(2), read_s, request)


async def _until_close(
    reader: asyncio.StreamReader, read_s: float | None, request: httpx.Request | None
) -> AsyncIterator[bytes]:
    while chunk := await _read(reader.read(READ_BYTES), read_s, request):
        yield chunk
