"""Server dialects and `detect(url)`, which tells which one answers at a base URL."""

from __future__ import annotations

import httpx

from collectors.errors import ServerUnreachable, SpectopError
from collectors.servers.llamacpp import LlamaCppCollector
from collectors.servers.snapshot import ServerSnapshot

__all__ = ["LlamaCppCollector", "ServerSnapshot", "check_url", "detect"]


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

    llama-server's /props has `build_info` and `total_slots`; SGLang's /server_info has its
    speculative args; vLLM's /metrics has `vllm:` series.
    """
    url = check_url(url)
    try:
        props = await client.get(url + "/props")
        if props.status_code == 200 and _is_json_with(props, "total_slots", "build_info"):
            return "llama.cpp"
        info = await client.get(url + "/server_info")
        if info.status_code == 200 and _is_json_with(info, "speculative_algorithm", "internal_states"):
            return "sglang"
        metrics = await client.get(url + "/metrics")
        if metrics.status_code == 200 and "vllm:" in metrics.text:
            return "vllm"
        if props.status_code == 401 or metrics.status_code == 401:
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


def _is_json_with(resp: httpx.Response, *keys: str) -> bool:
    try:
        body = resp.json()
    except ValueError:
        return False
    return isinstance(body, dict) and any(k in body for k in keys)
