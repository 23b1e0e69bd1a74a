"""httpx clients that answer every request with one SSE body, and a window measured over them."""

from __future__ import annotations

import httpx

from collectors.requests.client import RequestSpec
from collectors.sweep import measure
from tests.support.captures import sse_lines


def serving(body: bytes) -> httpx.AsyncClient:
    """A client whose every request is answered by `body` as an event stream."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def capture(name: str) -> bytes:
    """A captured stream's SSE body, as the server sent it."""
    return "".join(line + "\n\n" for _, line in sse_lines(name)).encode()


def stream_server() -> httpx.AsyncClient:
    """A client answered by llama-server's captured draft-simple completion stream (48 tokens)."""
    return serving(capture("draft-simple.completion.sse.jsonl"))


async def run_with(mark) -> measure.Window:
    """Two streamed requests measured as one window, with `mark` as the meter's mark (or None)."""
    async with stream_server() as client:
        return await measure.measure(
            client, "http://sim", [RequestSpec(max_tokens=48)] * 2, None, lambda: False, tag="t", mark=mark
        )
