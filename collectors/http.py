"""The one way spectop builds an HTTP client for an LLM server, reads a page, and says what went wrong.

The API key rides in a header to that server and nowhere else; proxy settings from the environment
are ignored (a local server sent through a corporate proxy fails in confusing ways); timeouts are
by purpose: a poll must answer quickly, a stream may go quiet for a long prefill.

Pitfalls handled: a server that accepts the connection and never answers is a poll timeout (3 s),
even on a client made for streams; a page is read at most `PAGE_MAX_BYTES` and `PAGE_MAX_S`, so
an endless or trickling page cannot grow memory or hold a poll forever; a kept-alive connection
the server dropped while idle fails the next request on it, so a GET is sent once more (connects
are retried by the transport); and a failure is told by what happened: "cannot reach" only when
no connection was made, never of a server that answered late, hung up or sent a broken body.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import weakref
from collections.abc import AsyncIterable, Coroutine, Sequence
from typing import Any, TypeVar

import httpx

from collectors.errors import ServerUnreachable, SpectopError
from collectors.loopback import Answer, LoopbackTransport, Sent, page_target
from collectors.url_auth import ORIGIN_AUTH, has_credentials

POLL_TIMEOUT = httpx.Timeout(3.0)
POLL_TIMEOUT_S = POLL_TIMEOUT.as_dict()
STREAM_TIMEOUT = httpx.Timeout(10.0, read=300.0)  # read: the longest silence between two stream events
PAGE_MAX_BYTES = 8 << 20  # a server's /metrics or JSON page; the largest real ones are well under 1 MB
PAGE_MAX_S = 10.0  # reading one page, all of it: a trickling page is as bad as a silent one
RETRIED = (httpx.RemoteProtocolError, httpx.ReadError)  # a dropped kept-alive connection shows as these
_T = TypeVar("_T")
NOT_A_SERVER = "is --server an LLM server? spectop reads llama-server, vLLM and SGLang"


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


UNCAPPED = httpx.Limits(max_connections=None, max_keepalive_connections=32)
_LOOPBACK: weakref.WeakKeyDictionary[httpx.AsyncClient, LoopbackTransport] = weakref.WeakKeyDictionary()


def make_client(api_key: str | None = None, timeout: httpx.Timeout = POLL_TIMEOUT) -> httpx.AsyncClient:
    """An async client for one server; `STREAM_TIMEOUT` for clients that stream completions. A poll
    client (the default timeout) reads pages from a server on this machine through the lighter
    collectors/loopback.py."""
    transport = httpx.AsyncHTTPTransport(retries=1, trust_env=False, limits=UNCAPPED)
    if timeout is POLL_TIMEOUT:
        loopback = LoopbackTransport(transport)
        client = _client(api_key, timeout, loopback)
        _LOOPBACK[client] = loopback  # get_page reads its pages through it directly
        return client
    return _client(api_key, timeout, transport)


def _client(
    api_key: str | None, timeout: httpx.Timeout, transport: httpx.AsyncBaseTransport
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=timeout,
        headers=auth_headers(api_key),
        auth=ORIGIN_AUTH,  # a password given in the URL (--server http://user:pw@host)
        trust_env=False,
        # one more try to connect; no cap on connections: a sweep point at batch B sends B requests
        # at once, and httpx's default pool of 100 would queue the rest, silently running a smaller
        # batch (limits go on the transport: the client's own are ignored when one is given)
        transport=transport,
    )


async def get_page(
    client: httpx.AsyncClient,
    url: str,
    params: dict[str, str] | None = None,
    *,
    max_bytes: int = PAGE_MAX_BYTES,
    max_s: float = PAGE_MAX_S,
) -> httpx.Response:
    """GET `url` with the poll timeout, its body read whole but bounded; sent once more when the
    connection was dropped. Raises httpx errors, or SpectopError for a page too long or too slow."""
    try:
        return await _bounded_page(client, url, params, max_bytes, max_s)
    except RETRIED:
        pass  # a kept-alive connection the server had dropped: once more, on a new connection
    return await _bounded_page(client, url, params, max_bytes, max_s)


async def gather_reads(*reads: Any) -> list[Any]:
    """`asyncio.gather` of a poll's page reads, but one failing cancels and awaits the others before
    the error goes on: a read left running would outlive its poll and, once its client closed, fail
    unheard (asyncio prints that as a traceback at exit)."""
    tasks = [asyncio.ensure_future(r) for r in reads]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def get_pages(
    client: httpx.AsyncClient,
    urls: Sequence[str],
    *,
    max_bytes: int = PAGE_MAX_BYTES,
    max_s: float = PAGE_MAX_S,
) -> list[httpx.Response]:
    """A poll's pages, as `gather_reads` of `get_page` each; but from a server on this machine every
    request is written before any answer is read, each on a connection of its own: the server works
    on them at once as before, and the poll makes no task per page. All of them are read within
    `max_s`; a failing page closes the connections of those not yet read."""
    loopback = _LOOPBACK.get(client)
    if loopback is None or any(page_target(u, None) is None or has_credentials(u) for u in urls):
        return await gather_reads(*(get_page(client, u, max_bytes=max_bytes, max_s=max_s) for u in urls))
    reading = [urls[0]]  # the page being read, for a failure's message
    return await _in_time(_read_pages(client, loopback, urls, max_bytes, reading), max_s, reading)


async def _read_pages(
    client: httpx.AsyncClient,
    loopback: LoopbackTransport,
    urls: Sequence[str],
    max_bytes: int,
    reading: list[str],
) -> list[httpx.Response]:
    sent: list[Sent] = []
    pages: list[httpx.Response] = []
    unread = 0  # sent[unread:] are not being read yet
    try:
        for url in urls:
            reading[0] = url
            one = await loopback.send(url, None, client.headers, POLL_TIMEOUT_S)
            assert one is not None  # page_target said it is loopback's
            sent.append(one)
        for url, one in zip(urls, sent):
            reading[0], unread = url, unread + 1
            try:
                pages.append(await _page_of(await loopback.answer(one, POLL_TIMEOUT_S), url, max_bytes))
            except RETRIED:  # a kept-alive connection the server dropped mid-answer: once more, alone
                pages.append(await _read_page(client, url, None, max_bytes))
        return pages
    except httpx.RequestError as exc:
        exc.request = _failed_request(reading[0], None)
        raise
    finally:
        for one in sent[unread:]:  # never read: the next request on them would read this answer
            one.abandon()


async def _bounded_page(
    client: httpx.AsyncClient, url: str, params: dict[str, str] | None, max_bytes: int, max_s: float
) -> httpx.Response:
    return await _in_time(_read_page(client, url, params, max_bytes), max_s, [url])


async def _in_time(read: Coroutine[Any, Any, _T], max_s: float, reading: list[str]) -> _T:
    """`read` within `max_s`, or SpectopError naming the page `reading[0]` it was still reading."""
    try:
        if sys.version_info >= (3, 11):  # no task per page, as wait_for makes
            async with asyncio.timeout(max_s):
                return await read
        return await asyncio.wait_for(read, max_s)
    except asyncio.TimeoutError:
        raise SpectopError(
            f"{reading[0]} was still sending its page after {max_s:g} s", f"{NOT_A_SERVER}; check its log"
        ) from None


async def _read_page(
    client: httpx.AsyncClient, url: str, params: dict[str, str] | None, max_bytes: int
) -> httpx.Response:
    loopback = _LOOPBACK.get(client)
    # a password given in the URL is added by the client's auth (ORIGIN_AUTH): such pages go through it
    if loopback is None or page_target(url, params) is None or has_credentials(url):
        async with client.stream("GET", url, params=params, timeout=POLL_TIMEOUT) as response:
            return await _bounded_body(response, url, max_bytes, response.request)
    try:
        answer = await loopback.open_answer(url, params, client.headers, POLL_TIMEOUT_S)
        assert answer is not None  # page_target said it is loopback's
        return await _page_of(answer, url, max_bytes)
    except httpx.RequestError as exc:
        exc.request = _failed_request(url, params)
        raise


def _failed_request(url: str, params: dict[str, str] | None) -> httpx.Request:
    """Made only on failure, for describe(): it names the URL."""
    return httpx.Request("GET", url, params=params, extensions={"timeout": POLL_TIMEOUT_S})


async def _page_of(answer: Answer, url: str, max_bytes: int) -> httpx.Response:
    """A loopback answer read whole and bounded, as one httpx.Response."""
    if answer.encoded:  # compressed: httpx's decoders read it
        opened = answer.response()
        try:
            return await _bounded_body(opened, url, max_bytes, None)
        finally:
            await opened.aclose()
    try:
        body = await _bounded(answer.stream, url, max_bytes)
    finally:
        await answer.stream.aclose()
    headers = [(k, v) for k, v in answer.headers if k.lower() != b"content-length"]
    return httpx.Response(answer.status, headers=headers, content=body)


async def _bounded(chunks: AsyncIterable[bytes], url: str, max_bytes: int) -> bytes:
    """A body read whole, or SpectopError once it passes `max_bytes`."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > max_bytes:
            raise SpectopError(
                f"{url} sent a page longer than {max_bytes >> 20} MB", f"{NOT_A_SERVER}; check its log"
            )
    return bytes(body)


async def _bounded_body(
    response: httpx.Response, url: str, max_bytes: int, request: httpx.Request | None
) -> httpx.Response:
    body = await _bounded(response.aiter_bytes(), url, max_bytes)
    # the body is decoded already: the new response must not decode it again
    headers = {
        k: v for k, v in response.headers.items() if k.lower() not in ("content-encoding", "content-length")
    }
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


def describe(
    exc: httpx.HTTPError, fix_unreachable: str = "start the server, or pass --server URL"
) -> SpectopError:
    """One line for an HTTP failure, by what happened; ServerUnreachable only when nothing connected."""
    url = _url_of(exc)
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        origin = "/".join(url.split("/", 3)[:3])
        if _unresolved(exc):
            host = httpx.URL(origin).host
            return ServerUnreachable(
                f"cannot reach {origin}: the name {host} did not resolve",
                "check the host name in the URL, or give its address, e.g. http://127.0.0.1:8080",
            )
        return ServerUnreachable(f"cannot reach {origin} ({type(exc).__name__})", fix_unreachable)
    if isinstance(exc, httpx.TimeoutException):
        seconds = _timeout_s(exc)
        return SpectopError(
            f"{url} accepted the connection but did not answer within {seconds}",
            "is the server stuck or overloaded? check its log",
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.CloseError)):
        return SpectopError(
            f"{url} closed the connection before its answer was complete ({type(exc).__name__})",
            "did the server crash or restart? check its log",
        )
    if isinstance(exc, httpx.DecodingError):
        return SpectopError(f"{url} sent a body that cannot be decoded ({exc})", NOT_A_SERVER)
    return SpectopError(f"{url}: {type(exc).__name__}: {exc}", NOT_A_SERVER)


def _unresolved(exc: BaseException) -> bool:
    """The connection failed because the host's name did not resolve (a gaierror somewhere below)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, socket.gaierror):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _url_of(exc: httpx.HTTPError) -> str:
    try:
        request = exc.request
    except RuntimeError:  # raised without a request (never by a real transport)
        return "the server"
    return str(request.url.copy_with(query=None))


def _timeout_s(exc: httpx.TimeoutException) -> str:
    try:
        timeout: Any = exc.request.extensions.get("timeout", {})
    except RuntimeError:
        return "the time allowed"
    kind = {
        httpx.ReadTimeout: "read",
        httpx.WriteTimeout: "write",
        httpx.PoolTimeout: "pool",
    }.get(type(exc), "read")
    seconds = timeout.get(kind)
    return f"{seconds:g} s" if isinstance(seconds, (int, float)) else "the time allowed"
