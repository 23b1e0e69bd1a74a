"""Reading what a server answered: JSON bodies, failed polls as snapshots, /metrics pages as finite samples.

Pitfalls handled: a poll that fails (a bad answer, a timeout, a refused connection) is still a
snapshot, with status "error" or "unreachable" and the one line that says why, so no worker loop
ends on it; a /metrics page that cannot be parsed leaves /metrics unknown with the parser's
reason; a NaN or infinite sample reads as absent, so no count or rate is ever NaN.
"""

from __future__ import annotations

import math
import time
from typing import Any

import httpx

from collectors import promtext
from collectors.errors import ServerUnreachable, SpectopError
from collectors.servers.snapshot import ServerSnapshot


def json_body(resp: httpx.Response) -> Any:
    """The JSON of a 200 answer, else None (also when the body is not JSON)."""
    try:
        return resp.json() if resp.status_code == 200 else None
    except (ValueError, RecursionError):  # RecursionError: nested too deep for the decoder
        return None


def json_with(resp: httpx.Response, *keys: str) -> bool:
    """A 200 answer whose JSON object has any of `keys`."""
    body = json_body(resp)
    return isinstance(body, dict) and any(k in body for k in keys)


def model_owner(resp: httpx.Response) -> str | None:
    """`owned_by` of the first model in an OpenAI /v1/models answer."""
    body = json_body(resp)
    data = body.get("data") if isinstance(body, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    owner = first.get("owned_by") if isinstance(first, dict) else None
    return owner if isinstance(owner, str) else None


def error_snapshot(url: str, backend: str, exc: Exception) -> ServerSnapshot:
    """A snapshot saying a poll failed: a SpectopError's line and fix, or (a bug) the exception's name."""
    if isinstance(exc, SpectopError):
        error, fix = exc.what, exc.fix
    else:
        error, fix = (
            f"{type(exc).__name__}: {exc}",
            "a server answer spectop does not expect: please report it",
        )
    status = "unreachable" if isinstance(exc, ServerUnreachable) else "error"
    return ServerSnapshot(
        url=url, backend=backend, taken_at_s=time.monotonic(), status=status, error=error, fix=fix
    )


def parse_metrics(
    text: str, buckets: tuple[str, ...] | None = None, blocks: promtext.PageBlocks | None = None
) -> dict[str, list[promtext.Sample]]:
    """A /metrics page's samples by name, NaN and infinite ones left out; ValueError on junk. With
    `buckets`, only those histograms' buckets are read (the rest are not parsed: a poll's cost);
    with `blocks`, the server's families unchanged since its last page are not parsed again."""
    parsed = promtext.parse(text if buckets is None else promtext.without_buckets(text, buckets), blocks)
    finite = {name: [s for s in rows if math.isfinite(s.value)] for name, rows in parsed.items()}
    return {name: rows for name, rows in finite.items() if rows}


def metrics_text(resp: httpx.Response) -> str:
    """A /metrics answer's text: the exposition format is UTF-8 whatever the header says (no
    charset lookup either: a poll's cost)."""
    return resp.content.decode("utf-8", "replace")


def read_metrics(
    resp: httpx.Response, buckets: tuple[str, ...] | None = None, blocks: promtext.PageBlocks | None = None
) -> tuple[dict[str, list[promtext.Sample]] | None, str]:
    """(samples, "ok") of a /metrics page, or (None, why it could not be read); `buckets` and
    `blocks`: as for `parse_metrics`."""
    try:
        return parse_metrics(metrics_text(resp), buckets, blocks), "ok"
    except ValueError as exc:
        return None, f"unreadable: {exc}"
