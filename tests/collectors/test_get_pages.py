"""A poll's pages read together from a server on this machine (collectors/http.py `get_pages`):
every request written before any answer is read, each on a connection of its own, against a real
socket server that answers by path, as llama-server's and uvicorn's HTTP/1.1 do."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from collectors import promtext
from collectors.errors import SpectopError
from collectors.http import get_pages, make_client
from collectors.servers.llamacpp.collector import LlamaCppCollector
from tests.support.captures import read_json, read_text


def sized(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


class PathServer:
    """Answers GET /NAME with `pages[NAME]` (a kept-alive answer with a length). `together`: no
    answer until that many requests are in (then each at once), so a client that reads one page before it asks for the
    next never gets one. `hang_up_on` is the request of a connection (1 the first) it closes without
    answering, as a server whose keep-alive timeout ends an idle connection just as a request comes;
    `trickle` pages send their head and then nothing. Notes each connection's end, seen from here."""

    def __init__(
        self, pages: dict[str, bytes], together: int = 1, hang_up_on: int = 0, trickle: tuple[str, ...] = ()
    ) -> None:
        self.pages, self.together, self.hang_up_on, self.trickle = pages, together, hang_up_on, trickle
        self.waiting: list[asyncio.Future[None]] = []
        self.requests: list[str] = []
        self.ended: list[str] = []  # the path last asked on each connection the client closed

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served, path = 0, ""
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ")[1].decode().lstrip("/")
                served += 1
                if served == self.hang_up_on:
                    break
                self.requests.append(path)
                await self._all_in()
                if path in self.trickle:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome")
                    await reader.read()  # until the client gives up and closes
                    break
                writer.write(sized(self.pages[path]))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended.append(path)
        except asyncio.CancelledError:
            pass  # the test's event loop is ending
        writer.close()

    async def _all_in(self) -> None:
        arrived = asyncio.get_running_loop().create_future()
        self.waiting.append(arrived)
        if len(self.waiting) >= self.together:
            for each in self.waiting:
                each.set_result(None)
            self.waiting.clear()
            self.together = 1  # the rest are answered as they come
        await arrived

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()


PAGES = {"slots": b"[]", "metrics": b"# metrics", "props": b"{}"}


async def test_a_polls_requests_are_all_at_the_server_before_any_answer_is_read():
    # a server that answers only when all three are in: a client reading one page at a time
    # would wait here until its timeout
    async with PathServer(PAGES, together=3) as url, make_client() as client:
        pages = await asyncio.wait_for(get_pages(client, [f"{url}/{p}" for p in PAGES]), 2.0)
        again = await asyncio.wait_for(get_pages(client, [f"{url}/{p}" for p in PAGES]), 2.0)
    assert [p.text for p in pages] == [p.text for p in again] == ["[]", "# metrics", "{}"]


async def test_a_kept_alive_connection_closed_by_the_server_is_asked_again_on_a_new_one():
    server = PathServer(PAGES, hang_up_on=2)  # every connection's second request goes unanswered
    async with server as url, make_client() as client:
        first = await get_pages(client, [f"{url}/slots", f"{url}/metrics"])
        second = await get_pages(client, [f"{url}/slots", f"{url}/metrics"])
    assert [p.text for p in first + second] == ["[]", "# metrics", "[]", "# metrics"]
    assert sorted(server.requests) == ["metrics", "metrics", "slots", "slots"]


async def test_a_page_that_fails_closes_the_connections_of_the_pages_not_read():
    # /metrics trickles past the bound; /props, asked after it, is never read: its connection is
    # closed, or the next poll's request on it would read this poll's /props answer
    server = PathServer(PAGES, trickle=("metrics",))
    gc.collect()  # what earlier tests left is collected before, not in, this one's count
    async with server as url, make_client() as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(SpectopError, match=r"/metrics was still sending its page after 0\.5 s"):
                await get_pages(client, [f"{url}/slots", f"{url}/metrics", f"{url}/props"], max_s=0.5)
            await asyncio.sleep(0.1)
        assert "props" in server.ended
        # closed by get_pages, not left for the garbage collector (which says so with a warning)
        assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
        server.trickle = ()
        pages = await get_pages(client, [f"{url}/props", f"{url}/slots"])
    assert [p.text for p in pages] == ["{}", "[]"]


async def test_a_llama_server_poll_asks_for_slots_and_metrics_together():
    # the captured pages of a busy drafting llama-server, from a server that answers only once the
    # poll's first requests are both in; the poll's second /metrics read then comes alone
    pages = {
        "slots": read_text("draft-simple.slots.busy.json").encode(),
        "metrics": read_text("draft-simple.metrics.busy.txt").encode(),
        "props": read_text("draft-simple.props.json").encode(),
    }
    server = PathServer(pages, together=3)  # the first poll reads /props too
    async with server as url:
        collector = LlamaCppCollector(url)
        try:
            raw = await asyncio.wait_for(collector.fetch(), 2.0)
        finally:
            await collector.aclose()
    assert server.requests == ["slots", "metrics", "props", "metrics"]
    assert raw.status == "ok" and raw.reads_agree
    assert raw.slots == read_json("draft-simple.slots.busy.json")
    assert raw.props["total_slots"] == read_json("draft-simple.props.json")["total_slots"]
    assert raw.metrics == promtext.parse(read_text("draft-simple.metrics.busy.txt"))
