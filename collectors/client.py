"""The streaming request client: sends one request, timestamps every event, returns a RequestRecord.

Works against llama-server's native `/completion` and OpenAI-style `/v1/chat/completions`
(llama-server, vLLM, SGLang). API keys go in a header to their server and nowhere else. The
server's text (model, finish reason, error) enters the record with its control characters made
visible (`fmt.printable`), and so does an error body quoted in an exception.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from collectors import latency, streams
from collectors.errors import ServerUnreachable, SpectopError
from collectors.fmt import printable
from collectors.http import auth_headers
from collectors.request_record import RequestRecord

DEFAULT_PROMPT = (
    "Explain, in plain words, why a power supply draws more current when the load on it grows, "
    "and what that means for the efficiency of a computer under heavy work."
)
_request_ids = itertools.count(1)

BusyProbe = Callable[[], Awaitable[int | None]]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What to send. Temperature 0 and a fixed length make plain and draft outputs comparable."""

    prompt: str = DEFAULT_PROMPT
    max_tokens: int = 128
    route: str = "completion"  # "completion" (llama-server native) or "chat"
    temperature: float = 0.0
    ignore_eos: bool = True
    dialect: str = "llama.cpp"  # "llama.cpp", "vllm", "sglang" or "openai"
    model: str | None = None


def request_body(spec: RequestSpec) -> tuple[str, dict[str, object]]:
    """The path and JSON body for a spec, with each dialect's way of reporting tokens per chunk."""
    llama = spec.dialect == "llama.cpp"
    if spec.route == "completion":
        body: dict[str, object] = {"prompt": spec.prompt, "n_predict": spec.max_tokens}
        path = "/completion"
    else:
        body = {
            "messages": [{"role": "user", "content": spec.prompt}],
            "max_tokens": spec.max_tokens,
            "stream_options": {"include_usage": True, "continuous_usage_stats": not llama},
        }
        path = "/v1/chat/completions"
        if spec.model:
            body["model"] = spec.model
        if spec.dialect == "sglang":
            body["return_spec_tokens_details"] = True
    body.update({"stream": True, "temperature": spec.temperature})
    if spec.ignore_eos:
        body["ignore_eos"] = True
    if llama:
        # per-event cumulative timings: exact token counts and a verify-step key on every event
        body["timings_per_token"] = True
    return path, body


async def sample_busy(probe: BusyProbe, samples: list[int], period_s: float) -> None:
    """Append the server's busy count every `period_s` until cancelled; unanswered reads are skipped."""
    while True:
        busy = await probe()
        if busy is not None:
            samples.append(busy)
        await asyncio.sleep(period_s)


async def stream_request(
    client: httpx.AsyncClient,
    base_url: str,
    spec: RequestSpec,
    *,
    api_key: str | None = None,
    busy_probe: BusyProbe | None = None,
    tag: str = "",
    clock: Callable[[], float] = time.monotonic,
) -> RequestRecord:
    """Send one streamed request and record every event's arrival on the monotonic clock."""
    path, body = request_body(spec)
    headers = auth_headers(api_key)
    state = streams.StreamState()
    native = spec.route == "completion"
    busy_samples: list[int] = []
    watcher = asyncio.create_task(sample_busy(busy_probe, busy_samples, 0.1)) if busy_probe else None
    t_send = clock()
    try:
        async with client.stream("POST", base_url.rstrip("/") + path, json=body, headers=headers) as response:
            if response.status_code != 200:
                detail = printable((await response.aread()).decode("utf-8", "replace")[:300])
                raise SpectopError(
                    f"{base_url}{path} answered HTTP {response.status_code}: {detail}",
                    "check the URL and the server's log",
                )
            async for line in response.aiter_lines():
                streams.feed_line(state, clock(), line, native)
    except httpx.TransportError as exc:
        raise ServerUnreachable(
            f"cannot stream from {base_url}{path}: {type(exc).__name__}", "is the server running?"
        ) from exc
    finally:
        if watcher:
            watcher.cancel()
    return record_of(state, f"r{next(_request_ids)}", base_url, path, t_send, clock(), busy_samples, tag)


def record_of(
    state: streams.StreamState,
    request_id: str,
    base_url: str,
    path: str,
    t_send: float,
    t_done: float,
    busy_samples: list[int],
    tag: str,
) -> RequestRecord:
    """The record of one finished stream: the server's counts, its events' latency, the busy samples."""
    drafting = state.draft_n is not None and state.draft_n > 0
    error = state.error if state.error else (None if state.done else "stream ended early")
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
        concurrency_mean=sum(busy_samples) / len(busy_samples) if busy_samples else None,
        concurrency_max=max(busy_samples) if busy_samples else None,
        tag=tag,
        error=_printable(error),
        tokens_per_event_exact=state.tokens_per_event_exact,
    )


def _printable(text: object) -> str | None:
    return None if text is None else printable(str(text))
