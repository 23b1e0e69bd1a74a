"""The poll client's page reads from a server on this machine (collectors/loopback.py), against a
real socket server that answers as llama-server's and uvicorn's HTTP/1.1 do: kept-alive answers
with a length, chunked ones, one closed after its answer, one read until the server closes."""

from __future__ import annotations

import asyncio
import gc
import gzip
import warnings

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.http import describe, get_page, make_client
from collectors.launch.process import free_port
from collectors.loopback import LoopbackTransport

Answer = bytes


class PageServer:
    """Answers each GET with the next of `answers` (the last one again when they run out); counts
    connections and requests; `close_after` answers on a connection, it hangs up."""

    def __init__(self, answers: list[Answer], close_after: int | None = None, port: int = 0) -> None:
        self.answers, self.close_after, self.port = answers, close_after, port
        self.connections = self.requests = 0
        self.heads: list[bytes] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head)
                self.requests += 1
                writer.write(self.answers[min(self.requests, len(self.answers)) - 1])
                await writer.drain()
                served += 1
                if self.close_after is not None and served >= self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # cancelled: the test's event loop is ending
        writer.close()

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()


def sized(body: bytes, *extra: bytes) -> Answer:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (
        len(body),
        b"".join(h + b"\r\n" for h in extra),
        body,
    )


async def test_pages_are_read_on_one_kept_alive_connection():
    async with PageServer([sized(b"page %d" % i) for i in range(1, 6)]) as url, make_client() as client:
        bodies = [(await get_page(client, url + "/metrics")).text for _ in range(5)]
    assert bodies == ["page 1", "page 2", "page 3", "page 4", "page 5"]
    assert loopback_transport_of(client) is not None


def loopback_transport_of(client: httpx.AsyncClient) -> LoopbackTransport | None:
    """The poll client's transport: the loopback one, which read the pages above."""
    transport = client._transport  # noqa: SLF001 - which transport the client was given
    return transport if isinstance(transport, LoopbackTransport) else None


async def test_a_server_that_closes_after_each_few_answers_is_reconnected():
    """llama-server (cpp-httplib) closes a kept-alive connection after 5 requests, saying
    `Connection: close` on the last answer; here after 2: 5 reads, 3 connections (2 + 2 + 1)."""
    answers = [sized(b"a"), sized(b"b", b"Connection: close")] * 3
    server = PageServer(answers, close_after=2)
    async with server as url, make_client() as client:
        bodies = [(await get_page(client, url + "/slots")).text for _ in range(5)]
    assert bodies == ["a", "b", "a", "b", "a"] and server.connections == 3


async def test_an_idle_connection_the_server_dropped_is_tried_again_on_a_new_one():
    """The server hangs up after every answer without saying so: each read finds its kept-alive
    connection closed and reads the page on a new one, never failing."""
    server = PageServer([sized(b"ok")], close_after=1)
    async with server as url, make_client() as client:
        bodies = []
        for _ in range(3):
            bodies.append((await get_page(client, url + "/health")).text)
            await asyncio.sleep(0.05)  # the hang-up reaches the client while the connection is idle
    assert bodies == ["ok"] * 3 and server.connections == 3


async def test_a_chunked_answer_with_extensions_and_trailers_is_read_whole():
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=value\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )
    server = PageServer([chunked, sized(b"next")])
    async with server as url, make_client() as client:
        first = await get_page(client, url + "/metrics")
        second = await get_page(client, url + "/metrics")
    assert (first.text, second.text) == ("hello world", "next") and server.connections == 1


async def test_an_answer_without_a_length_is_read_until_the_server_closes():
    server = PageServer([b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it"], close_after=1)
    async with server as url, make_client() as client:
        page = await get_page(client, url + "/metrics")
        again = await get_page(client, url + "/metrics")
    assert page.text == again.text == "all of it" and server.connections == 2


async def test_a_body_cut_short_says_the_server_hung_up():
    server = PageServer([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"], close_after=1)
    async with server as url, make_client() as client:
        with pytest.raises(httpx.RemoteProtocolError) as caught:
            await get_page(client, url + "/metrics")
    assert "closed the connection before its answer was complete" in describe(caught.value).what


async def test_the_request_carries_the_clients_headers_and_the_query():
    server = PageServer([sized(b"{}")])
    async with server as url, make_client(api_key="k3y") as client:
        await get_page(client, url + "/slots", {"fail_on_no_slot": "0"})
    head = server.heads[0].decode()
    assert head.startswith("GET /slots?fail_on_no_slot=0 HTTP/1.1\r\n")
    assert "Authorization: Bearer k3y" in head.split("\r\n") and f"Host: {url[7:]}" in head.split("\r\n")


async def test_a_post_goes_to_httpx_transport():
    server = PageServer([sized(b"posted")])
    async with server as url, make_client() as client:
        answer = await client.post(url + "/completion", json={"prompt": "x"})
    assert answer.text == "posted" and server.heads[0].startswith(b"POST /completion")


async def test_the_clients_own_get_reads_through_the_same_connections():
    """`client.get` (httpx's request building, then this transport) and `get_page` (sent directly)
    share the kept-alive connection."""
    server = PageServer([sized(b"one"), sized(b"two"), sized(b"three")])
    async with server as url, make_client() as client:
        first = (await client.get(url + "/health")).text
        second = (await get_page(client, url + "/health")).text
        third = (await client.get(url + "/health")).text
    assert (first, second, third) == ("one", "two", "three") and server.connections == 1


def test_a_client_used_again_under_another_event_loop_reads_on_a_new_connection():
    """A command that polls under one asyncio.run and again under the next keeps its client: the
    kept-alive connection the first loop made (to the same port) is not used by the second."""
    port = free_port()

    async def serve_and_read(client: httpx.AsyncClient, answer: bytes) -> str:
        server = PageServer([sized(answer)], port=port)
        async with server as url:
            return (await get_page(client, url + "/health")).text

    client = make_client()
    first = asyncio.run(serve_and_read(client, b"first run"))
    second = asyncio.run(serve_and_read(client, b"second run"))
    asyncio.run(client.aclose())
    assert (first, second) == ("first run", "second run")


async def test_a_compressed_page_is_decoded_and_a_page_over_the_bound_is_refused():
    """A page is read straight from the connection; a Content-Encoding sends it through httpx's
    decoders; either way the bound on its size holds, and the connection stays usable after a
    page that was read whole."""
    page = b"llamacpp:tokens_predicted_total 963\n" * 40
    answers = [sized(gzip.compress(page), b"Content-Encoding: gzip"), sized(page), sized(page)]
    server = PageServer(answers)
    async with server as url, make_client() as client:
        zipped = await get_page(client, url + "/metrics")
        plain = await get_page(client, url + "/metrics")
        with pytest.raises(SpectopError, match="longer than"):
            await get_page(client, url + "/metrics", max_bytes=len(page) - 1)
    assert zipped.content == plain.content == page
    assert zipped.headers.get("content-length") == str(len(page))  # of the body as read, decoded
    assert "content-encoding" not in zipped.headers
    assert server.connections == 1  # a refused page's connection may go; the two read whole kept it


async def test_an_answer_that_is_not_http_says_so_and_its_connection_is_closed():
    # closed here, not left to the garbage collector (which says so with a ResourceWarning)
    gc.collect()  # what earlier tests left is collected before, not in, this one's count
    async with PageServer([b"SSH-2.0-OpenSSH_9.6\r\n\r\n"]) as url, make_client() as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(httpx.RemoteProtocolError) as failed:
                await get_page(client, url + "/metrics")
            said = str(failed.value)
            del failed  # its traceback holds the connection
            gc.collect()
    assert said.startswith("not an HTTP answer: b'SSH-2.0-OpenSSH_9.6'")
    assert not [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
