"""HTTP/1.1 as collectors/loopback.py reads it: an answer's head, and its body framed by
Content-Length, chunked transfer or the server's close, handed on as it arrives; each wait bounded,
each failure one of httpx's exceptions (so collectors/http.py tells them apart as for httpx's own
transport)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx

READ_BYTES = 65536
SIZED_PART_BYTES = 1 << 20  # a body with a length is handed on in parts of this, so its bound applies


async def timed(
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


def parse_head(
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


def length_of(value: bytes, request: httpx.Request | None) -> int:
    if not value.strip().isdigit():
        raise httpx.RemoteProtocolError(f"a broken Content-Length: {value[:40]!r}", request=request)
    return int(value)


async def empty() -> AsyncIterator[bytes]:
    return
    yield b""  # an async generator that yields nothing


async def _read(awaitable: Any, read_s: float | None, request: httpx.Request | None) -> Any:
    """A read of the body, its failures as httpx's."""
    try:
        return await timed(awaitable, read_s, httpx.ReadTimeout, request)
    except asyncio.IncompleteReadError as exc:
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=request
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise httpx.RemoteProtocolError("a line of the answer is too long", request=request) from exc
    except ConnectionError as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc


async def sized(
    reader: asyncio.StreamReader, left: int, read_s: float | None, request: httpx.Request | None
) -> AsyncIterator[bytes]:
    while left > 0:  # a page in one read (each read is a task and a timer); a huge one in parts
        chunk = await _read(reader.readexactly(min(left, SIZED_PART_BYTES)), read_s, request)
        left -= len(chunk)
        yield chunk


async def chunked(
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
        async for chunk in sized(reader, left, read_s, request):
            yield chunk
        await _read(reader.readexactly(2), read_s, request)


async def until_close(
    reader: asyncio.StreamReader, read_s: float | None, request: httpx.Request | None
) -> AsyncIterator[bytes]:
    while chunk := await _read(reader.read(READ_BYTES), read_s, request):
        yield chunk
