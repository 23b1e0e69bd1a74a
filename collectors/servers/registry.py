"""Which dialects spectop knows, in detection order; `detect`, `open_collector`, `check_url`.

Adding a dialect is one module (a `ServerCollector` subclass) and one line in `DIALECTS`.
Pitfalls handled: the order matters (llama-server's /props first: it is unambiguous; SGLang
before vLLM, whose evidence is the weaker /v1/models and /metrics); an unreachable server, one
that connects but does not answer in time or hangs up, a server that wants an API key and a
server that is none of these each get their own one-line error with the fix ("cannot reach" only
when nothing connected).
"""

from __future__ import annotations

import httpx

from collectors.errors import SpectopError
from collectors.http import describe
from collectors.servers.base import Probe, ServerCollector
from collectors.servers.llamacpp.collector import LlamaCppCollector
from collectors.servers.sglang.collector import SglangCollector
from collectors.servers.vllm.collector import VllmCollector
from collectors.url_auth import shown, without_userinfo

DIALECTS: list[type[ServerCollector]] = [
    LlamaCppCollector,
    SglangCollector,
    VllmCollector,
]


def _names(joiner: str) -> str:
    names = [d.display_name for d in DIALECTS]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def dialect(backend: str) -> type[ServerCollector]:
    """The dialect `detect` calls `backend`; a clear error for one spectop does not read."""
    found = next((d for d in DIALECTS if d.backend == backend), None)
    if found is None:
        raise SpectopError(f"no collector for a {backend!r} server", f"spectop reads {_names('and')}")
    return found


def default_route(backend: str) -> str:
    """The request route a probe or sweep uses on `backend`; OpenAI chat where no dialect claims it."""
    found = next((d for d in DIALECTS if d.backend == backend), None)
    return found.default_route if found is not None else "chat"


def open_collector(
    url: str, backend: str, client: httpx.AsyncClient | None = None, api_key: str | None = None
) -> ServerCollector:
    """The collector for `backend` (as `detect` names it) at `url`."""
    return dialect(backend)(check_url(url), client=client, api_key=api_key)


def check_url(url: str) -> str:
    """The base URL without a trailing slash or a password (collectors/url_auth.py keeps that for the
    requests); a clear error when it is not an http(s) URL."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise SpectopError(
            f"not a valid server URL: {shown(url)!r}", "use e.g. http://127.0.0.1:8080"
        ) from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise SpectopError(f"not a valid server URL: {shown(url)!r}", "use e.g. http://127.0.0.1:8080")
    return without_userinfo(url).rstrip("/")


async def detect(url: str, client: httpx.AsyncClient) -> str:
    """The `backend` of the first dialect in `DIALECTS` that says the server at `url` is its own."""
    url = check_url(url)
    probe = Probe(url, client)
    try:
        for candidate in DIALECTS:
            if await candidate.answers(probe):
                return candidate.backend
    except httpx.HTTPError as exc:
        raise describe(exc, "start the server, or pass --server with the right host and port") from exc
    if probe.refused():
        raise SpectopError(f"{url} needs an API key", "pass --api-key or set SPECTOP_API_KEY")
    raise SpectopError(
        f"{url} answers, but not as {_names('or')}",
        "point --server at the LLM server's base URL (e.g. http://127.0.0.1:8080)",
    )
