"""An exporter's page read again and again on one kept-alive `http.client` connection.

A power exporter's page is read once a second for as long as spectop watches, and the sampler's
reads were a tenth of the dashboard's cost on vLLM with a DCGM meter. A whole meter read of a
one-GPU DCGM page over loopback took 1.9 ms of CPU through httpx's client (request building, its
auth and redirect hooks, httpcore) and 0.66 ms here; of an 8-GPU page, 1.9 and 1.15
(tests/bench/bench_meter_page.py, medians). Plain `http://` pages are read
here; https and a URL given with a password stay on httpx (its TLS, and `ORIGIN_AUTH`).
"""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

from collectors.url_auth import has_credentials

MAX_PAGE_BYTES = 16 << 20  # a metrics page of a large GPU box is a few hundred KB
# what a kept-alive connection the server closed while it sat idle raises on its next request
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class PageTooLarge(http.client.HTTPException):
    """The answer's body is over MAX_PAGE_BYTES."""


def plain_http(url: str) -> bool:
    """A page `PlainPage` reads: http://, a host, no password given for its origin, a target that
    needs no encoding."""
    parts = urlsplit(url)
    target = parts.path + parts.query
    return (
        parts.scheme == "http"
        and bool(parts.hostname)
        and not has_credentials(url)
        and target.isascii()
        and target.isprintable()
        and " " not in target
    )


class PlainPage:
    """GETs of `url` (see `plain_http`), each on the connection the last one left open. Failures
    are `OSError` (refused, timed out, reset) or `http.client.HTTPException` (not HTTP, too large)."""

    def __init__(self, url: str, timeout_s: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 80
        self.target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        self.timeout_s = timeout_s
        self._connection: http.client.HTTPConnection | None = None

    def get(self) -> tuple[int, bytes]:
        """(status, body) of one GET; once more on a new connection when the kept one had been
        closed by the server while it sat idle."""
        reused = self._connection is not None
        try:
            return self._get_once()
        except _STALE:
            if not reused:
                raise
        return self._get_once()

    def _get_once(self) -> tuple[int, bytes]:
        connection = self._connection or http.client.HTTPConnection(
            self.host, self.port, timeout=self.timeout_s
        )
        self._connection = None
        try:
            connection.request("GET", self.target, headers={"Accept-Encoding": "identity"})
            answer = connection.getresponse()
            body = answer.read(MAX_PAGE_BYTES + 1)
        except BaseException:
            connection.close()
            raise
        if len(body) > MAX_PAGE_BYTES:
            connection.close()
            raise PageTooLarge(f"the page is over {MAX_PAGE_BYTES >> 20} MiB")
        if answer.will_close:
            connection.close()
        else:
            self._connection = connection
        return answer.status, body

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
