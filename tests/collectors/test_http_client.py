"""The one HTTP client: as many requests at once as a sweep point's batch, not httpx's 100."""

from __future__ import annotations

import asyncio

import pytest

from collectors.errors import SpectopError
from collectors.http import STREAM_TIMEOUT, gather_reads, make_client

AT_ONCE = 120  # past httpx's default pool of 100 connections


async def test_a_batch_past_one_hundred_requests_runs_all_at_once():
    connected = 0
    everyone = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connected
        await reader.readuntil(b"\r\n\r\n")
        connected += 1
        if connected == AT_ONCE:
            everyone.set()
        await everyone.wait()  # nobody is answered until every request is in: a queued one never arrives
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, backlog=AT_ONCE * 2)
    port = server.sockets[0].getsockname()[1]
    async with server, make_client(timeout=STREAM_TIMEOUT) as client:
        gets = [client.get(f"http://127.0.0.1:{port}/") for _ in range(AT_ONCE)]
        answers = await asyncio.wait_for(asyncio.gather(*gets), 30)
    assert [a.text for a in answers] == ["ok"] * AT_ONCE


def test_a_failing_read_cancels_its_siblings_before_the_error_goes_on():
    """One page read of a poll fails (a page past the size limit): the poll's other reads are
    cancelled and done by the time the caller sees the error, not left to fail unheard at exit
    (a clean-clone CI run printed such a traceback after spectop's one-line error)."""

    async def too_long():
        raise SpectopError("/metrics sent a page longer than 8 MB", "check the server")

    async def slow_page():
        await asyncio.sleep(30)

    async def scenario():
        sibling = asyncio.ensure_future(slow_page())
        with pytest.raises(SpectopError, match="longer than 8 MB"):
            await gather_reads(sibling, too_long())
        # done now, while the caller handles the error: not only when asyncio.run shuts down
        return sibling.done() and sibling.cancelled()

    assert asyncio.run(scenario())
