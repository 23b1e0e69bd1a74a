"""The streaming request client: sends one request, timestamps every event, returns a RequestRecord.

The request body and the way its stream reads (SSE or NDJSON, and each event's fields) are the
dialect's, asked of the registry; a server no dialect claims is spoken to OpenAI-style. API keys go in a header to their server and nowhere else. The
server's text (model, finish reason, error) enters the record with its control characters made
visible (`fmt.printable`), and so does an error body quoted in an exception.
Pitfalls handled: a stream is bounded by what was asked (`StreamLimits`: events, bytes and wall
time grow with max_tokens), so an endless or silent stream ends in one SpectopError instead of
running forever with memory growing; lines are split here, since a line that never ends would
grow without bound inside httpx's line reader; an error body is read only as far as it is shown;
a failure says what happened (collectors/http.py `describe`) and names the endpoint.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import httpx

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.http import NOT_A_SERVER, auth_headers, describe
from collectors.requests import latency, streams
from collectors.requests.record import RequestRecord, busy_figures
from collectors.requests.spec import DEFAULT_PROMPT, STREAM_LIMITS, RequestSpec, StreamLimits
from collectors.requests.stream_state import StreamState
from collectors.servers import registry
from collectors.servers.wire import EventReader

__all__ = [
    "DEFAULT_PROMPT",
    "STREAM_LIMITS",
    "RequestSpec",
    "StreamLimits",
    "busy_sampling",
    "failed_record",
    "record_of",
    "request_body",
    "stream_request",
]

_request_ids = itertools.count(1)

BusyProbe = Callable[[], Awaitable[int | None]]
ERROR_BODY_BYTES = 4096  # of a non-200 answer: enough for its message, never an endless body


def request_body(spec: RequestSpec) -> tuple[str, dict[str, object]]:
    """The path and JSON body for a spec, as its dialect asks (collectors/servers/registry.py)."""
    return registry.request_body(spec)


@contextlib.asynccontextmanager
async def busy_sampling(
    probe: BusyProbe | None, period_s: float, clock: Callable[[], float] = time.monotonic
) -> AsyncIterator[list[tuple[float, int]]]:
    """(answered at, busy count) every `period_s` while the block runs; unanswered reads are skipped.

    Stopped by a flag as well as a cancel: Python 3.11's `wait_for` (under every bounded page read)
    can swallow a cancel that lands as the read completes; the sampler then polled for good."""
    samples: list[tuple[float, int]] = []
    stopped = False

    async def sample() -> None:
        assert probe is not None
        while not stopped:
            try:
                busy = await probe()
            except (SpectopError, httpx.HTTPError):
                busy = None  # the poll shows what is wrong; a sample is only skipped
            if busy is not None and not stopped:
                samples.append((clock(), busy))
            await asyncio.sleep(period_s)

    task = asyncio.create_task(sample()) if probe else None
    try:
        yield samples
    finally:
        stopped = True
        if task:
            task.cancel()


async def stream_request(
    client: httpx.AsyncClient,
    base_url: str,
    spec: RequestSpec,
    *,
    api_key: str | None = None,
    busy_probe: BusyProbe | None = None,
    tag: str = "",
    clock: Callable[[], float] = time.monotonic,
    limits: StreamLimits = STREAM_LIMITS,
    concurrent: int = 1,
    mark: Callable[[], object] | None = None,
) -> RequestRecord:
    """Send one streamed request and record every event's arrival on the monotonic clock; `mark`
    (a meter's `Sampler.mark`) is called just before the send and just after the last event, so a
    counter read once a second gives the request's window exact ends.

    Raises SpectopError, naming the endpoint, when the server cannot be read or the stream
    breaks `limits` (with `concurrent` requests sharing the server)."""
    path, body = request_body(spec)
    reader = registry.event_reader(spec)
    endpoint = base_url.rstrip("/") + path
    state = StreamState()
    if mark is not None:
        await asyncio.to_thread(mark)
    t_send = clock()
    wall_s = limits.seconds(spec, concurrent)
    try:
        async with busy_sampling(busy_probe, 0.1, clock) as busy_samples:
            stream = _read(client, endpoint, body, auth_headers(api_key), state, reader, spec, limits, clock)
            await asyncio.wait_for(stream, wall_s)
    except asyncio.TimeoutError:
        raise SpectopError(
            f"{endpoint} was still streaming after {wall_s:g} s, longer than {spec.max_tokens} tokens "
            "may take",
            "is the server stuck or overloaded? check its log",
        ) from None
    except httpx.HTTPError as exc:
        raise describe(exc) from exc
    except SpectopError as exc:  # said of the stream: named here
        raise SpectopError(f"{endpoint} {exc.what}", exc.fix) from None
    busy = [b for _, b in busy_samples]
    t_done = clock()
    if mark is not None:
        await asyncio.to_thread(mark)
    return record_of(state, f"r{next(_request_ids)}", base_url, path, t_send, t_done, busy, tag)


async def _read(
    client: httpx.AsyncClient,
    endpoint: str,
    body: dict[str, object],
    headers: dict[str, str],
    state: StreamState,
    reader: EventReader,
    spec: RequestSpec,
    limits: StreamLimits,
    clock: Callable[[], float],
) -> None:
    """Feed the stream's lines into `state` through `reader`, within the events and bytes `limits` allow."""
    max_events, max_bytes = limits.events(spec), limits.bytes(spec)
    events = 0
    async with client.stream("POST", endpoint, json=body, headers=headers) as response:
        if response.status_code != 200:
            detail = printable(await _head(response, ERROR_BODY_BYTES))
            raise SpectopError(
                f"answered HTTP {response.status_code}: {detail[:300]}", "check the URL and the server's log"
            )
        async for t_s, line in _lines(response.aiter_bytes(), max_bytes, clock):
            if streams.event_data(line, reader.framing) is not None:
                events += 1
                if events > max_events:
                    raise SpectopError(
                        f"sent more than {max_events} events for {spec.max_tokens} tokens", NOT_A_SERVER
                    )
            streams.feed_event_line(state, t_s, line, reader)


async def _lines(
    chunks: AsyncIterator[bytes], max_bytes: int, clock: Callable[[], float]
) -> AsyncIterator[tuple[float, str]]:
    """The text lines of a byte stream (UTF-8, bad bytes replaced), each with the instant the chunk
    that ended it arrived; SpectopError past `max_bytes`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending: list[str] = []  # the line so far, in pieces: a long line is not copied per chunk
    total = 0
    t_s = 0.0  # no line is yielded before the first chunk sets it
    async for chunk in chunks:
        # stamped on receipt, before any line of it is parsed: the events of one chunk arrived
        # together, and parsing the first must not delay the stamp of the last
        t_s = clock()
        total += len(chunk)
        if total > max_bytes:
            raise SpectopError(f"sent more than {max_bytes >> 10} KB in one stream", NOT_A_SERVER)
        first, *rest = decoder.decode(chunk).split("\n")
        pending.append(first)
        for piece in rest:
            yield t_s, "".join(pending).rstrip("\r")
            pending = [piece]
    last = "".join(pending) + decoder.decode(b"", final=True)
    if last:
        yield t_s, last.rstrip("\r")


async def _head(response: httpx.Response, max_bytes: int) -> str:
    """The start of a body, at most `max_bytes` of it read."""
    head = b""
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= max_bytes:
            break
    return head[:max_bytes].decode("utf-8", "replace")


def failed_record(
    base_url: str, spec: RequestSpec, t_send: float, t_done: float, error: str, tag: str
) -> RequestRecord:
    """The record of a request that failed before its stream could be read: no tokens, its error."""
    path, _ = request_body(spec)
    state = StreamState(error=error)
    return record_of(state, f"r{next(_request_ids)}", base_url, path, t_send, t_done, [], tag)


def record_of(
    state: StreamState,
    request_id: str,
    base_url: str,
    path: str,
    t_send: float,
    t_done: float,
    busy_samples: Sequence[int],
    tag: str,
) -> RequestRecord:
    """The record of one finished stream: the server's counts, its events' latency, the busy samples."""
    drafting = state.draft_n is not None and state.draft_n > 0
    concurrency_mean, concurrency_max = busy_figures(busy_samples)
    return RequestRecord(
        request_id=request_id,
        server_url=base_url,
        route=path,
        t_send_s=t_send,
        t_done_s=t_done,
        events=tuple(state.events),
        latency=latency.profile(state.events, t_send, drafting=drafting),
        committed_tokens=state.committed_tokens,
        prompt_tokens=state.prompt_tokens,
        draft_n=state.draft_n,
        draft_n_accepted=state.draft_n_accepted,
        server_steps=state.steps(),
        finish_reason=_printable(state.finish_reason),
        model=_printable(state.model),
        text_sha256=state.text_sha256,
        text_chars=len(state.text),
        concurrency_mean=concurrency_mean,
        concurrency_max=concurrency_max,
        tag=tag,
        error=_printable(state.error) if state.error else (None if state.done else "stream ended early"),
        tokens_per_event_exact=state.tokens_per_event_exact,
    )


def _printable(text: object) -> str | None:
    return None if text is None else printable(str(text))
