"""The one contract every server dialect implements, and the helpers the dialects share.

A dialect is one `ServerCollector` subclass: its capabilities are class attributes, `answers()`
says whether a base URL is that server, `fetch()`/`derive()` make a poll, `busy_slots()` and
`window_counters()` serve the sweep. `registry.DIALECTS` lists them in detection order.

Pitfalls handled: detection asks every dialect in turn, but each endpoint is fetched once
(`Probe` caches answers) so detecting costs no more requests than one hand-written probe; a body
that is not JSON reads as None, never an exception; an HTTP problem is told in one line that
names the fix (401 always means an API key); a window's ratios are ratios of counter deltas,
and a delta of reads the server printed rounded is kept only when the rounding cannot swamp it.
Every GET is a bounded page (collectors/http.py); a bad answer (answers.py) makes that poll a
snapshot with status "error" naming the endpoint, never an exception out of `poll`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypedDict

import httpx

from collectors import promtext
from collectors.errors import ServerUnreachable, SpectopError
from collectors.http import describe, get_page, get_pages, make_client
from collectors.servers.advice import DialectAdvice
from collectors.servers.answers import error_snapshot, metrics_text, parse_metrics, read_metrics
from collectors.servers.schedule_form import DialectSchedule
from collectors.servers.snapshot import ServerSnapshot
from collectors.servers.window import WindowCounters as WindowCounters  # the contract's, kept importable here
from collectors.servers.window import WindowDelta as WindowDelta
from collectors.servers.window import window_delta as window_delta
from collectors.servers.wire import DialectWire

REFUSED = "refused: the server needs an API key (--api-key or SPECTOP_API_KEY)"
IDENTITY_POLLS = 10  # what a dialect reads once per server start is read again every this many polls


@dataclass
class RawPoll:
    """What a server's endpoints returned at one instant; a dialect's `derive` turns two into a snapshot.

    Every dialect's poll has these; a dialect subclasses it with what it reads besides /metrics.
    """

    t_s: float
    status: str = "ok"
    error: str | None = None
    fix: str | None = None
    metrics: dict[str, list[promtext.Sample]] | None = None
    metrics_status: str = "ok"


def poll_fields(url: str, backend: str, raw: RawPoll) -> dict[str, Any]:
    """The snapshot fields every dialect copies from its current poll."""
    return dict(url=url, backend=backend, taken_at_s=raw.t_s, status=raw.status, error=raw.error, fix=raw.fix)


def brackets_window(prev: RawPoll | None, cur: RawPoll, needs_metrics: bool = True) -> bool:
    """Two successful polls, both with /metrics where the window is read from it, bracket a window."""
    if prev is None or prev.status != "ok" or cur.status != "ok":
        return False
    return not needs_metrics or (prev.metrics is not None and cur.metrics is not None)


def per_second(count: float | None, seconds: float) -> float | None:
    """A window's count per second; None when the count is unknown or the window empty."""
    return count / seconds if count is not None and seconds > 0 else None


def position_deltas(before: tuple[int, ...], after: tuple[int, ...]) -> tuple[int, ...]:
    """Accepted tokens per draft position over the window; a position new since `before` counts from 0."""
    before = before + (0,) * (len(after) - len(before))
    return tuple(b - a for a, b in zip(before, after, strict=False))


class Failure(TypedDict):
    """A failed poll's `RawPoll` fields."""

    status: str
    error: str
    fix: str


class Collector(Protocol):
    """What the dashboard, exporter and sweep use: a dialect's collector, or one that detects first."""

    url: str

    @property
    def backend(self) -> str: ...

    async def poll(self) -> ServerSnapshot: ...

    async def busy_slots(self) -> int | None: ...

    async def window_counters(self) -> WindowCounters | None: ...

    async def aclose(self) -> None: ...


class Probe:
    """GETs against one base URL for detection, each path fetched at most once."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.url = url
        self._client = client
        self._answers: dict[str, httpx.Response] = {}

    async def get(self, path: str) -> httpx.Response:
        """The answer at `path`; HTTP errors propagate (the caller says what went wrong)."""
        if path not in self._answers:
            self._answers[path] = await get_page(self._client, self.url + path)
        return self._answers[path]

    def refused(self) -> bool:
        """Some endpoint asked for an API key."""
        return any(r.status_code == 401 for r in self._answers.values())


class ServerCollector(DialectWire, DialectAdvice, DialectSchedule):
    """One server dialect. Subclasses set the capabilities and implement `answers`, `fetch`, `derive`."""

    backend: ClassVar[str]  # the name detection returns and snapshots and sweep rows carry
    display_name: ClassVar[str]  # the server as people call it, for messages
    start_hint: ClassVar[str] = "start the server there"  # how to start it, for "cannot reach" fixes
    default_route: ClassVar[str] = "chat"  # "completion" (llama-server's native route) or "chat"
    health_endpoint: ClassVar[str] = "/health"
    load_endpoint: ClassVar[str | None] = None  # live running/waiting requests, where there is one
    has_window_counters: ClassVar[bool] = False  # `window_counters()` can bracket a sweep window
    # the histograms whose buckets the dialect reads; a poll parses no other bucket lines
    read_buckets: ClassVar[tuple[str, ...]] = ()
    # (path, HTTP status) -> what it means and how to fix it; 401 is always an API key
    http_hints: ClassVar[Mapping[tuple[str, int], str]] = {}

    def __init__(
        self,
        url: str,
        client: httpx.AsyncClient | None = None,
        api_key: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._client = client or make_client(api_key)
        self._prev: Any = None
        self._identity: Any = None  # what a dialect reads once per server start (version, config)
        self._polls_since_identity = 0
        self.page_blocks = promtext.PageBlocks()  # /metrics' families, parsed again only when changed

    def read_metrics(self, resp: httpx.Response) -> tuple[dict[str, list[promtext.Sample]] | None, str]:
        """(samples, "ok") of this server's /metrics answer, or (None, why not): answers.py's, with
        the dialect's buckets and this server's families kept from its last page."""
        return read_metrics(resp, self.read_buckets, self.page_blocks)

    @classmethod
    async def answers(cls, probe: Probe) -> bool:
        """Is the server at `probe.url` this dialect? Fetch through `probe`; transport errors propagate."""
        raise NotImplementedError

    @classmethod
    def http_problem(cls, resp: httpx.Response, path: str) -> str:
        """One line for a non-200 answer at `path`: what it means here and how to fix it."""
        if resp.status_code == 401:
            return REFUSED
        return cls.http_hints.get((path, resp.status_code), f"HTTP {resp.status_code}")

    def failed(self, exc: httpx.HTTPError) -> Failure:
        """The status, error and fix of a poll that failed over HTTP: "unreachable" only when
        nothing connected; a timeout, a dropped connection or a broken body is an "error"."""
        problem = describe(exc, f"{self.start_hint}, or pass --server URL")
        status = "unreachable" if isinstance(problem, ServerUnreachable) else "error"
        return Failure(status=status, error=problem.what, fix=problem.fix)

    async def get(self, path: str, params: dict[str, str] | None = None) -> httpx.Response:
        """One bounded GET of `path` (collectors/http.py `get_page`)."""
        return await get_page(self._client, self.url + path, params)

    async def get_all(self, *paths: str) -> list[httpx.Response]:
        """The pages at `paths`, read together (collectors/http.py `get_pages`)."""
        return await get_pages(self._client, [self.url + path for path in paths])

    async def scrape(self) -> dict[str, list[promtext.Sample]] | None:
        """/metrics parsed now; None when unreachable, not HTTP 200, or not a metrics page."""
        try:
            resp = await self.get("/metrics")
            return (
                parse_metrics(metrics_text(resp), blocks=self.page_blocks)
                if resp.status_code == 200
                else None
            )
        except (httpx.HTTPError, SpectopError, ValueError):
            return None

    async def fetch(self) -> RawPoll:
        """One raw poll of the server's endpoints (a dialect's RawPoll); never raises for HTTP trouble."""
        raise NotImplementedError

    def derive(self, prev: Any, raw: Any) -> ServerSnapshot:
        raise NotImplementedError

    def identity_due(self) -> bool:
        """Count a poll: is the identity unread, or `IDENTITY_POLLS` polls old (a restart that
        changed it without the counters running back)?"""
        self._polls_since_identity += 1
        if self._identity is None or self._polls_since_identity >= IDENTITY_POLLS:
            self._polls_since_identity = 0
            return True
        return False

    def forget(self) -> None:
        """Drop what is read once per server start (identity, config); called after failures and restarts."""
        self._identity = None

    async def poll(self) -> ServerSnapshot:
        """One snapshot, with window figures against the previous successful poll; an answer of
        the wrong shape gives a snapshot with status "error" that names it."""
        try:
            raw = await self.fetch()
            snapshot = self.derive(self._prev, raw)
        except SpectopError as exc:
            self.forget()
            return error_snapshot(self.url, self.backend, exc)
        if raw.status == "ok":
            self._prev = raw
        if raw.status != "ok" or snapshot.restarted:
            self.forget()
        return snapshot

    async def busy_slots(self) -> int | None:
        """Requests running right now, for sampling concurrency; None when the server does not say."""
        return None

    async def window_counters(self) -> WindowCounters | None:
        """The cumulative counters now; None when the dialect has none or they cannot be read."""
        return None

    async def aclose(self) -> None:
        await self._client.aclose()
