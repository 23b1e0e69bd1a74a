"""Server dialects, `detect(url)`, which tells which one answers at a base URL, and `open_collector`."""

from __future__ import annotations

from typing import Protocol

import httpx

from collectors.errors import ServerUnreachable, SpectopError
from collectors.servers.llamacpp import LlamaCppCollector
from collectors.servers.sglang import SglangCollector, SglangSnapshot
from collectors.servers.snapshot import ServerSnapshot
from collectors.servers.vllm import VllmCollector

__all__ = [
    "BACKENDS",
    "Collector",
    "LlamaCppCollector",
    "ServerSnapshot",
    "SglangCollector",
    "SglangSnapshot",
    "VllmCollector",
    "check_url",
    "detect",
    "open_collector",
]

BACKENDS = {"llama.cpp": LlamaCppCollector, "vllm": VllmCollector, "sglang": SglangCollector}


class Collector(Protocol):
    """What every dialect's collector offers."""

    backend: str
    url: str

    async def poll(self) -> ServerSnapshot: ...

    async def busy_slots(self) -> int | None: ...

    async def aclose(self) -> None: ...


def open_collector(
    url: str, backend: str, client: httpx.AsyncClient | None = None, api_key: str | None = None
) -> Collector:
    """The collector for `backend` ("llama.cpp", "vllm" or "sglang", as `detect` names them)."""
    try:
        cls = BACKENDS[backend]
    except KeyError:
        raise SpectopError(
            f"no collector for a {backend!r} server", "spectop reads llama-server, vLLM and SGLang"
        ) from None
    return cls(check_url(url), client=client, api_key=api_key)


def check_url(url: str) -> str:
    """The base URL without a trailing slash; a clear error when it is not an http(s) URL."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise SpectopError(f"not a valid server URL: {url!r}", "use e.g. http://127.0.0.1:8080") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise SpectopError(f"not a valid server URL: {url!r}", "use e.g. http://127.0.0.1:8080")
    return url.rstrip("/")


async def detect(url: str, client: httpx.AsyncClient) -> str:
    """Which server answers at `url`: "llama.cpp", "sglang" or "vllm".

    llama-server's /props has `build_info` and `total_slots`; SGLang's /server_info
    (/get_server_info before 0.5.9) has `internal_states` and its speculative args; vLLM's
    /v1/models says `owned_by: vllm`, and its /metrics has `vllm:` series (unless
    --disable-log-stats, hence both). SGLang's /v1/models says `owned_by: sglang`.
    """
    url = check_url(url)
    try:
        props = await client.get(url + "/props")
        if props.status_code == 200 and _is_json_with(props, "total_slots", "build_info"):
            return "llama.cpp"
        info = await client.get(url + "/server_info")
        if info.status_code == 404:
            info = await client.get(url + "/get_server_info")
        if info.status_code == 200 and _is_json_with(info, "speculative_algorithm", "internal_states"):
            return "sglang"
        models = await client.get(url + "/v1/models")
        owner = _owner(models)
        if owner in ("vllm", "sglang"):
            return owner
        metrics = await client.get(url + "/metrics")
        if metrics.status_code == 200 and "vllm:" in metrics.text:
            return "vllm"
        if metrics.status_code == 200 and "sglang:" in metrics.text:
            return "sglang"
        if 401 in (props.status_code, models.status_code, metrics.status_code):
            raise SpectopError(f"{url} needs an API key", "pass --api-key or set SPECTOP_API_KEY")
    except httpx.TransportError as exc:
        raise ServerUnreachable(
            f"cannot reach {url} ({type(exc).__name__})",
            "start the server, or pass --server with the right host and port",
        ) from exc
    raise SpectopError(
        f"{url} answers, but not as llama-server, vLLM or SGLang",
        "point --server at the LLM server's base URL (e.g. http://127.0.0.1:8080)",
    )


def _owner(resp: httpx.Response) -> str | None:
    """`owned_by` of the first model in an OpenAI /v1/models answer."""
    try:
        data = resp.json().get("data") if resp.status_code == 200 else None
    except (ValueError, AttributeError):
        return None
    first = data[0] if isinstance(data, list) and data else None
    return first.get("owned_by") if isinstance(first, dict) else None


def _is_json_with(resp: httpx.Response, *keys: str) -> bool:
    try:
        body = resp.json()
    except ValueError:
        return False
    return isinstance(body, dict) and any(k in body for k in keys)
