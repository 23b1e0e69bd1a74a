"""Remote meters over HTTP: a dcgm-exporter or node_exporter page, or a Prometheus server's query API.

URL options (taken off the URL before requesting): `?period=S` is the sensor's update period in
seconds, for the short-window flag (default: 30 s for DCGM, dcgm-exporter's collect interval; 1 s
for node_exporter, which reads sysfs at scrape time; 60 s for Prometheus, its default scrape
interval). `?host=NAME` keeps one host's series (Hostname/hostname label, or instance).
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable

import httpx

from collectors import promtext
from collectors.errors import MeterUnavailable
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.page_get import PlainPage, plain_http
from collectors.meters.remote import (
    DCGM_ENERGY,
    DCGM_POWER,
    RemoteTotals,
    Series,
    dcgm_series,
    node_rapl_series,
    period_option,
    split_url,
)
from collectors.url_auth import ORIGIN_AUTH

DCGM_PERIOD_S = 30.0
TIMEOUT_S = 3.0  # for each connect and read of a page
PROMETHEUS_PERIOD_S = 60.0
_PROM_QUERIES = (  # tried in order; the first that returns series decides what the meter reads
    ("dcgm", f"{DCGM_ENERGY} or {DCGM_POWER}"),
    ("node", '{__name__=~"node_rapl_(package|dram)_joules_total|node_rapl_joules_total"}'),
)


class _HttpMeter:
    """Shared plumbing: one httpx client, throttled fetches, one-line errors with a fix."""

    kind = ""
    info: MeterInfo

    def __init__(
        self,
        url: str,
        default_path: str,
        client: httpx.Client | None,
        min_interval_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.url, self.options = split_url(url, default_path)
        self._own_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=TIMEOUT_S, auth=ORIGIN_AUTH)
        self._min_interval_s, self._clock = min_interval_s, clock
        self._totals = RemoteTotals()
        self._last: MeterReading | None = None
        self.host = self.options.get("host")
        try:
            self.info = self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> MeterInfo:
        """First fetch: find what the source has, or raise MeterUnavailable saying what is missing."""
        raise NotImplementedError

    def _get(self, url: str, **params: str) -> httpx.Response:
        try:
            response = self._client.get(url, params=params or None)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise self._unanswered(url, str(exc)) from exc
        return response

    def _unanswered(self, url: str, why: str) -> MeterUnavailable:
        # one line: a status line that is not HTTP comes back in http.client's error as sent
        why = " ".join(why.split())[:120]
        return MeterUnavailable(
            f"{self.kind} at {url} did not answer: {why}",
            "check the URL and that the port is reachable from here",
        )

    def _scrape(self) -> list[Series]:
        raise NotImplementedError

    def _fetch(self) -> tuple[float, list[Series]]:
        t0 = self._clock()
        series = self._scrape()
        return 0.5 * (t0 + self._clock()), series

    def read(self) -> MeterReading:
        if self._last is not None and self._clock() - self._last.t_s < self._min_interval_s:
            return self._last  # the sensor behind it is slower than this; spare the server
        t_s, series = self._fetch()
        if not series:
            raise MeterUnavailable(f"{self.kind} at {self.url} returned no power series this time")
        self._last = self._totals.update(t_s, series)
        return self._last

    def close(self) -> None:
        if self._own_client:
            self._client.close()


class ExporterMeter(_HttpMeter):
    """dcgm-exporter (`kind="dcgm"`, default :9400/metrics) or node_exporter RAPL (`kind="node"`)."""

    def __init__(
        self,
        url: str,
        kind: str = "dcgm",
        *,
        client: httpx.Client | None = None,
        min_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = kind
        self.kind = "DCGM exporter" if kind == "dcgm" else "node_exporter"
        self._pick = dcgm_series if kind == "dcgm" else node_rapl_series
        self._families = (DCGM_ENERGY, DCGM_POWER) if kind == "dcgm" else ("node_rapl_",)
        self._page, self._page_series = b"", list[Series]()
        self._blocks = promtext.PageBlocks()  # the lines whose values alone moved are not parsed again
        page_url = split_url(url, "/metrics")[0]
        # an own client's plain http:// page is read on a kept-alive http.client connection
        plain = client is None and plain_http(page_url)
        self._plain = PlainPage(page_url, TIMEOUT_S) if plain else None
        super().__init__(url, "/metrics", client, min_interval_s, clock)

    def _open(self) -> MeterInfo:
        dcgm = self.source == "dcgm"
        t_s, first = self._fetch()
        if not first:
            fix = (
                f"is this dcgm-exporter's page (usually :9400/metrics) with {DCGM_ENERGY} enabled?"
                if dcgm
                else "node_exporter exports RAPL only when it can read energy_uj: run it as root "
                "(runAsUser: 0) with the rapl collector on"
            )
            raise MeterUnavailable(f"{self.url} has no {'GPU power' if dcgm else 'RAPL'} series", fix)
        self._last = self._totals.update(t_s, first)
        period_s = period_option(self.options, DCGM_PERIOD_S if dcgm else self._min_interval_s)
        # a sensor declared faster than the default throttle is fetched as often as it changes
        self._min_interval_s = min(self._min_interval_s, period_s)
        return _describe(self.source, first, self.url, period_s, self.options)

    def close(self) -> None:
        super().close()
        if self._plain is not None:
            self._plain.close()

    def _body(self) -> bytes:
        """The page, on the kept-alive plain connection where there is one (collectors/meters/page_get.py)."""
        if self._plain is None:
            return self._get(self.url).content
        try:
            status, body = self._plain.get()
        except (OSError, http.client.HTTPException) as exc:
            raise self._unanswered(self.url, str(exc) or type(exc).__name__) from exc
        if not 200 <= status < 300:
            raise self._unanswered(self.url, f"HTTP {status}")
        return body

    def _scrape(self) -> list[Series]:
        body = self._body()
        if body == self._page:  # an exporter between its collections serves the same page: not parsed again
            return self._page_series
        text = body.decode("utf-8", "replace")
        try:
            # only the power and energy lines are parsed (a GPU box's page is mostly other counters)
            series = self._pick(self._blocks.samples(promtext.only_families(text, self._families)), self.host)
            if not series:
                promtext.parse(text)  # none there: say so only of a real metrics page, junk is junk
            self._page, self._page_series = body, series
            return series
        except ValueError as exc:
            raise MeterUnavailable(
                f"{self.url} is not a Prometheus metrics page: {exc}", "point at the exporter's /metrics"
            ) from exc


class PrometheusMeter(_HttpMeter):
    """Instant queries against `/api/v1/query`: DCGM GPU energy first, else node_exporter RAPL."""

    kind = "Prometheus"

    def __init__(
        self,
        url: str,
        *,
        client: httpx.Client | None = None,
        min_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(url, "", client, min_interval_s, clock)

    def _open(self) -> MeterInfo:
        for source, query in _PROM_QUERIES:
            self._source, self._query = source, query
            t_s, first = self._fetch()
            if first:
                break
        else:
            raise MeterUnavailable(
                f"Prometheus at {self.url} has no {DCGM_ENERGY}, {DCGM_POWER} or node_rapl_* series"
                + (f" for host {self.host!r}" if self.host else ""),
                "check that it scrapes dcgm-exporter or node_exporter (and the ?host= name)",
            )
        self._last = self._totals.update(t_s, first)
        period_s = period_option(self.options, PROMETHEUS_PERIOD_S)
        return _describe(self._source, first, self.url, period_s, self.options, via="prometheus")

    def _scrape(self) -> list[Series]:
        response = self._get(f"{self.url}/api/v1/query", query=self._query)
        try:
            body = response.json()
            if body.get("status") != "success":
                raise ValueError(body.get("error", "status is not success"))
            results = body["data"]["result"]
            # Values come as strings ("123.4", "NaN"); value[0] is the evaluation time, not the scrape's.
            samples = [
                promtext.Sample(r["metric"].get("__name__", ""), r["metric"], float(r["value"][1]))
                for r in results
            ]
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise MeterUnavailable(
                f"Prometheus at {self.url} gave an unreadable answer: {exc}",
                "point at the Prometheus server itself, e.g. http://prom:9090",
            ) from exc
        if self._source == "dcgm":
            return dcgm_series(samples, self.host)
        return node_rapl_series(samples, self.host)


def _describe(
    kind: str,
    series: list[Series],
    url: str,
    period_s: float,
    options: dict[str, str],
    via: str | None = None,
) -> MeterInfo:
    gpu = kind == "dcgm"
    notes = []
    if any(s.mig for s in series):
        notes.append("MIG: one row per GPU kept (each MIG row repeats the whole GPU); includes other tenants")
    if gpu and "period" not in options:
        notes.append("dcgm-exporter collects every 30 s by default: run it with -c 1000 and add ?period=1")
    if not gpu:
        notes.append(
            "a RAPL wrap looks like a counter reset here: up to one scrape of energy is lost per wrap"
        )
    counted = all(s.energy_j is not None for s in series)
    return MeterInfo(
        name=via or kind,
        devices=tuple(s.device for s in series),
        boundary="GPU board (remote)" if gpu else "CPU package (remote RAPL)",
        method="counter" if counted else "integrated",
        update_period_s=period_s,
        detail=f"{url}: "
        + (
            "DCGM energy counter"
            if counted and gpu
            else "DCGM power gauge integrated"
            if gpu
            else "node_exporter RAPL counters"
        ),
        notes=tuple(notes),
    )
