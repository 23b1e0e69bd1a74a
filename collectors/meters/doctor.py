"""`spectop doctor` as data: every meter and server tried, what was found, and how to fix what was not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

import httpx

from collectors.errors import MeterUnavailable
from collectors.meters.specs import (
    REMOTE,
    Opener,
    ProbeResult,
    default_openers,
    parse_spec,
    probe_all,
    try_open,
)

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
        """A meter works, and the server answers when one was asked about."""
        server_ok = all(r.status == "ok" for r in self.rows if r.kind == "server")
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


def check_server(url: str, client: httpx.Client | None = None) -> list[DoctorRow]:
    """Does the server answer `/health` and `/props`? (Dialect detection lives in collectors/servers.)"""
    base = url.rstrip("/")
    if "://" not in base:
        return [
            DoctorRow("server", url, "failed", f"{url!r} is not a URL", "e.g. --server http://localhost:8080")
        ]
    own = client is None
    http = client if client is not None else httpx.Client(timeout=3.0)
    rows = []
    try:
        for path in ("/health", "/props"):
            try:
                r = http.get(base + path)
            except httpx.HTTPError as exc:
                rows.append(
                    DoctorRow(
                        "server",
                        base + path,
                        "failed",
                        f"no answer: {type(exc).__name__}: {exc}",
                        "start the server, or check --server URL and that the port is reachable",
                    )
                )
                break  # the same error would repeat for the next path
            # Server text is untrusted: report only the status and a short, single-line excerpt.
            excerpt = " ".join(r.text.split())[:80]
            if r.status_code == 200:
                rows.append(DoctorRow("server", base + path, "ok", f"HTTP 200 {excerpt}"))
            elif path == "/props":
                rows.append(
                    DoctorRow(
                        "server",
                        base + path,
                        "skipped",
                        f"HTTP {r.status_code}: not llama-server?",
                        "fine for vLLM and SGLang, which have no /props",
                    )
                )
            else:
                rows.append(
                    DoctorRow(
                        "server",
                        base + path,
                        "failed",
                        f"HTTP {r.status_code} {excerpt}",
                        "the server is up but not ready (still loading the model?)",
                    )
                )
    finally:
        if own:
            http.close()
    return rows


def run_doctor(
    meter_spec: str = "auto",
    server_url: str | None = None,
    *,
    openers: Mapping[str, Opener] | None = None,
    client: httpx.Client | None = None,
) -> DoctorReport:
    rows = check_meters(meter_spec, openers)
    if server_url:
        rows += check_server(server_url, client)
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
