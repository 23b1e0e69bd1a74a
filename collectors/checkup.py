"""`spectop doctor` as data: every meter and server tried, what was found, and how to fix what was not.

Pitfalls handled: the server's dialect is detected the way every command detects it (the server
registry), then only that dialect's own health and load endpoints are asked, and one poll by its
own collector says its version and what its /metrics gives (engine stats off, metrics not
enabled); a missing optional endpoint is "skipped" and does not fail the report; a server still
loading its model fails detection, so /health is reported on its own to say so; server and
exporter text is untrusted, so a row carries at most a short single-line excerpt of it, with its
control characters made visible (`fmt.printable`); the API key goes to the server, never to a meter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

import httpx

from collectors.errors import MeterUnavailable, ServerUnreachable, SpectopError
from collectors.fmt import printable
from collectors.http import make_client
from collectors.meters.specs import (
    REMOTE,
    Opener,
    ProbeResult,
    default_openers,
    parse_spec,
    probe_all,
    try_open,
)
from collectors.servers import ServerCollector, check_url, detect, dialect
from collectors.servers.registry import open_collector
from collectors.servers.snapshot import ServerSnapshot

Status = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class DoctorRow:
    """One thing checked. `fix` is set for every failure."""

    kind: Literal["meter", "server"]
    name: str
    status: Status
    message: str
    fix: str = ""
    chosen: bool = False  # the meter `--meter` would use

    def __post_init__(self) -> None:
        for name in ("name", "message", "fix"):
            object.__setattr__(self, name, printable(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class DoctorReport:
    rows: tuple[DoctorRow, ...]
    meter_spec: str
    server_url: str | None

    @property
    def chosen(self) -> DoctorRow | None:
        return next((r for r in self.rows if r.chosen), None)

    @property
    def ok(self) -> bool:
        """A meter works, and the server answers when one was asked about (an optional endpoint
        the server leaves off is "skipped", not a failure)."""
        server_ok = all(r.status != "failed" for r in self.rows if r.kind == "server")
        return self.chosen is not None and server_ok

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "meter_spec": self.meter_spec,
            "meter": self.chosen.name if self.chosen else None,
            "server": self.server_url,
            "checks": [asdict(r) for r in self.rows],
        }


def _meter_row(result: ProbeResult, chosen: bool) -> DoctorRow:
    if not result.ok:
        return DoctorRow("meter", result.name, "failed", result.message, result.fix)
    info = result.info
    message = result.message + (f" ({info.detail})" if info and info.detail else "")
    if info and info.notes:
        message += "; " + "; ".join(info.notes)
    return DoctorRow("meter", result.name, "ok", message, chosen=chosen)


def check_meters(meter_spec: str = "auto", openers: Mapping[str, Opener] | None = None) -> list[DoctorRow]:
    """`auto`: every local source, first working one chosen; a named spec: that one only."""
    try:
        name, arg = parse_spec(meter_spec)
    except MeterUnavailable as exc:
        return [DoctorRow("meter", meter_spec, "failed", exc.what, exc.fix)]
    if name == "none":
        return [
            DoctorRow("meter", "none", "ok", "no meter asked for: energy figures are left out", chosen=True)
        ]
    if name == "auto":
        results = probe_all(openers)
    else:
        meter, result = try_open(name, arg, openers if openers is not None else default_openers())
        if meter is not None:
            meter.close()
        results = [result]
    first_ok = next((r.name for r in results if r.ok), None)
    rows = [_meter_row(r, r.name == first_ok) for r in results]
    if name == "auto":
        rows += [
            DoctorRow("meter", r, "skipped", "remote: not tried without a URL", f"--meter {r}=URL")
            for r in REMOTE
        ]
    return rows


UNREACHABLE_FIX = "start the server, or check --server URL and that the port is reachable"
NOT_READY_FIX = "the server is up but not ready (still loading the model?)"


def check_server(
    url: str, client: httpx.AsyncClient | None = None, api_key: str | None = None
) -> list[DoctorRow]:
    """Which dialect answers at `url` (detected as every command does), then its health and load endpoints."""
    base = url.rstrip("/")
    if "://" not in base:
        return [
            DoctorRow("server", url, "failed", f"{url!r} is not a URL", "e.g. --server http://localhost:8080")
        ]
    try:
        base = check_url(base)
    except SpectopError as exc:
        return [DoctorRow("server", url, "failed", exc.what, exc.fix)]
    return asyncio.run(_check_server(base, client, api_key))


async def _check_server(
    base: str, client: httpx.AsyncClient | None, api_key: str | None = None
) -> list[DoctorRow]:
    http = client if client is not None else make_client(api_key)
    try:
        try:
            backend = await detect(base, http)
        except ServerUnreachable as exc:
            return [DoctorRow("server", base, "failed", f"no answer: {exc.what}", UNREACHABLE_FIX)]
        except SpectopError as exc:
            # not a dialect spectop knows, or it wants a key: /health still tells whether it is up
            return [
                await _endpoint_row(http, base, "/health", None),
                DoctorRow("server", base, "failed", exc.what, exc.fix),
            ]
        found = dialect(backend)
        # one poll by the dialect's own collector (sharing the client): version, /metrics as read
        snapshot = await open_collector(base, backend, http).poll()
        version = snapshot.build or "version unknown"
        rows = [
            DoctorRow("server", base, "ok", f"{found.display_name} {version} answers (backend {backend})")
        ]
        rows.append(await _endpoint_row(http, base, found.health_endpoint, None))
        if found.load_endpoint:
            rows.append(await _endpoint_row(http, base, found.load_endpoint, found))
        rows.append(_metrics_row(base, snapshot))
        return rows
    finally:
        if client is None:
            await http.aclose()


async def _endpoint_row(
    http: httpx.AsyncClient, base: str, path: str, load_of: type[ServerCollector] | None
) -> DoctorRow:
    """One endpoint: a health endpoint must answer 200; a load endpoint (`load_of` its dialect) may be off."""
    try:
        r = await http.get(base + path)
    except httpx.HTTPError as exc:
        return DoctorRow("server", base + path, "failed", f"no answer: {type(exc).__name__}", UNREACHABLE_FIX)
    # Server text is untrusted: report only the status and a short, single-line excerpt.
    excerpt = " ".join(r.text.split())[:80]
    if r.status_code == 200:
        return DoctorRow("server", base + path, "ok", f"HTTP 200 {excerpt}")
    if load_of is None:
        return DoctorRow("server", base + path, "failed", f"HTTP {r.status_code} {excerpt}", NOT_READY_FIX)
    problem = load_of.http_problem(r, path)
    fix = problem if problem != f"HTTP {r.status_code}" else f"live request counts need {path}"
    return DoctorRow("server", base + path, "skipped", f"HTTP {r.status_code} {excerpt}", fix)


def _metrics_row(base: str, snapshot: ServerSnapshot) -> DoctorRow:
    """/metrics as the dialect reads it: drafting known, or why not and how to turn it on."""
    name = base + "/metrics"
    if snapshot.status not in ("ok", "loading"):
        return DoctorRow("server", name, "skipped", f"not read: {snapshot.error}", snapshot.fix or "")
    if snapshot.metrics_status != "ok":
        return DoctorRow("server", name, "skipped", snapshot.metrics_status, snapshot.metrics_status)
    types = f" ({snapshot.spec_types})" if snapshot.spec_types else ""
    drafting: dict[bool | None, str] = {True: f"drafting{types}", False: "drafts nothing"}
    return DoctorRow("server", name, "ok", "readable; " + drafting.get(snapshot.drafting, "drafting unknown"))


def run_doctor(
    meter_spec: str = "auto",
    server_url: str | None = None,
    *,
    openers: Mapping[str, Opener] | None = None,
    client: httpx.AsyncClient | None = None,
    api_key: str | None = None,
) -> DoctorReport:
    rows = check_meters(meter_spec, openers)
    if server_url:
        rows += check_server(server_url, client, api_key)
    return DoctorReport(tuple(rows), meter_spec, server_url)


def format_report(report: DoctorReport) -> str:
    """Plain text, one check per line, fixes indented below failures."""
    marks = {"ok": "ok  ", "failed": "FAIL", "skipped": "skip"}
    lines = []
    for r in report.rows:
        star = " *" if r.chosen else ""
        lines.append(f"[{marks[r.status]}] {r.kind} {r.name}{star}: {r.message}")
        if r.fix and r.status != "ok":
            lines.append(f"       fix: {r.fix}")
    chosen = report.chosen
    if chosen is None:
        lines.append("no power meter works here: energy figures will be missing (see the fixes above)")
    elif chosen.name == "estimate":
        lines.append("using meter: estimate (an ESTIMATE from CPU load × TDP, not a measurement)")
    else:
        lines.append(f"using meter: {chosen.name}")
    return "\n".join(lines)
