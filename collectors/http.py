"""The one way spectop builds an HTTP client for an LLM server.

The API key rides in a header to that server and nowhere else; proxy settings from the environment
are ignored (a local server sent through a corporate proxy fails in confusing ways); timeouts are
by purpose: a poll must answer quickly, a stream may go quiet for a long prefill.
"""

from __future__ import annotations

import httpx

POLL_TIMEOUT = httpx.Timeout(3.0)
STREAM_TIMEOUT = httpx.Timeout(10.0, read=300.0)  # read: the longest silence between two stream events


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def make_client(api_key: str | None = None, timeout: httpx.Timeout = POLL_TIMEOUT) -> httpx.AsyncClient:
    """An async client for one server; `STREAM_TIMEOUT` for clients that stream completions."""
    return httpx.AsyncClient(timeout=timeout, headers=auth_headers(api_key), trust_env=False)
