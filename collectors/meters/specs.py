"""`--meter SPEC`: parse it, open the meter it names, and for `auto` record why each source was skipped."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from collectors.errors import MeterUnavailable
from collectors.fmt import number_in
from collectors.meters.base import Meter, MeterInfo
from collectors.meters.sampler import Sampler, watching_rate_hz
from collectors.url_auth import shown

Opener = Callable[[str | None], Meter]  # receives the text after ':' or '=', or None
MAX_TDP_W = 10_000.0  # `estimate=W` is one machine's CPUs: beyond any socket count sold


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One source tried: what it found, or why it failed and how to fix that."""

    name: str
    ok: bool
    message: str
    fix: str = ""
    info: MeterInfo | None = None


@dataclass(frozen=True, slots=True)
class MeterChoice:
    """The meter a spec opened (None for `none`) and every source tried on the way."""

    meter: Meter | None
    results: tuple[ProbeResult, ...]


def _indices(arg: str | None) -> list[int] | None:
    if not arg:
        return None
    try:
        return [int(x) for x in arg.split(",") if x.strip()]
    except ValueError as exc:
        raise MeterUnavailable(f"bad GPU indices {arg!r}", "give numbers, e.g. nvml:0,1") from exc


def _need(arg: str | None, name: str) -> str:
    if not arg:
        raise MeterUnavailable(f"meter {name!r} needs a URL", f"e.g. {name}=http://gpu-box:9400/metrics")
    return arg


def _tdp(arg: str | None) -> float | None:
    if not arg:
        return None
    # a NaN or negative TDP would estimate NaN or negative joules, a huge one megajoules
    tdp_w = number_in(arg, 0, MAX_TDP_W, above_low=True)
    if tdp_w is None:
        raise MeterUnavailable(
            f"bad TDP {arg!r}: give watts above 0, up to {MAX_TDP_W:g}", "e.g. estimate=65"
        )
    return tdp_w


def _module(name: str) -> Any:
    # imported when opened, so one missing library (pynvml, amdsmi) hides only its own meter
    return importlib.import_module(f"collectors.meters.{name}")


@dataclass(frozen=True, slots=True)
class MeterKind:
    """One power source `--meter` can name: adding a meter is its module plus one entry in METERS."""

    name: str
    argument: str  # how the spec's argument is written, e.g. "[:0,1]" or "=URL"
    description: str
    local: bool  # local sources take part in `auto`, in the order listed
    open: Opener  # receives the text after ':' or '=', or None


METERS: tuple[MeterKind, ...] = (
    MeterKind(
        "nvml",
        "[:0,1]",
        "NVIDIA GPUs via NVML (all, or these NVML indices)",
        True,
        lambda a: _module("nvml").NvmlMeter(_indices(a)),
    ),
    MeterKind(
        "amd",
        "[:0,1]",
        "AMD GPUs via amdsmi, else amdgpu hwmon",
        True,
        lambda a: _module("amd").AmdMeter(_indices(a)),
    ),
    MeterKind(
        "rapl",
        "[=ROOT]",
        "CPU package (+DRAM) via Linux powercap sysfs (needs root)",
        True,
        lambda a: _module("rapl").RaplMeter(a or _module("rapl").DEFAULT_ROOT),
    ),
    MeterKind(
        "macmon",
        "[=EXE]",
        "Apple silicon SoC via `macmon pipe` (brew install macmon)",
        True,
        lambda a: _module("macmon").MacmonMeter(a or "macmon"),
    ),
    MeterKind(
        "dcgm",
        "=URL",
        "a remote dcgm-exporter page (?period=S: its collect interval, default 30 s)",
        False,
        lambda a: _module("exporters").ExporterMeter(_need(a, "dcgm"), "dcgm"),
    ),
    MeterKind(
        "node",
        "=URL",
        "a remote node_exporter's RAPL counters",
        False,
        lambda a: _module("exporters").ExporterMeter(_need(a, "node"), "node"),
    ),
    MeterKind(
        "prometheus",
        "=URL",
        "a Prometheus server's query API (DCGM, else node RAPL; ?host=NAME)",
        False,
        lambda a: _module("exporters").PrometheusMeter(_need(a, "prometheus")),
    ),
    MeterKind(
        "estimate",
        "[=TDP_W]",
        "CPU load × TDP model: an ESTIMATE, labelled as such",
        True,
        lambda a: _module("estimate").EstimateMeter(tdp_w=_tdp(a)),
    ),
)
AUTO_ORDER = tuple(m.name for m in METERS if m.local)  # best local source first
REMOTE = tuple(m.name for m in METERS if not m.local)
METER_SPECS: tuple[tuple[str, str], ...] = (
    ("auto", "the best local source: " + ", ".join(AUTO_ORDER[:-1]) + f", then {AUTO_ORDER[-1]}"),
    *((m.name + m.argument, m.description) for m in METERS),
    ("none", "no meter: energy figures are left out"),
)
_VALID = ", ".join(s for s, _ in METER_SPECS)


def default_openers() -> dict[str, Opener]:
    """Meter constructors by spec name."""
    return {m.name: m.open for m in METERS}


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`nvml:0,1` → ("nvml", "0,1"); `dcgm=URL` → ("dcgm", URL); bad names raise MeterUnavailable."""
    text = (spec or "auto").strip()
    cut = min((i for i in (text.find(":"), text.find("=")) if i >= 0), default=-1)
    name, arg = (text[:cut], text[cut + 1 :]) if cut >= 0 else (text, None)
    name = name.strip().lower()
    if name not in (*(m.name for m in METERS), "auto", "none"):
        raise MeterUnavailable(f"unknown meter {shown(spec)!r}", f"valid meters: {_VALID}")
    if name in ("auto", "none") and arg:
        raise MeterUnavailable(
            f"meter {name!r} takes no argument ({shown(spec)!r})", f"valid meters: {_VALID}"
        )
    return name, arg


def summarize(info: MeterInfo) -> str:
    """One line: what a working meter measures, and how."""
    label = "ESTIMATE" if info.method == "estimate" else info.method
    return f"{info.boundary} [{label}, updates every {info.update_period_s:g} s]: " + ", ".join(info.devices)


def try_open(name: str, arg: str | None, openers: Mapping[str, Opener]) -> tuple[Meter | None, ProbeResult]:
    """Open one meter; failures become a ProbeResult with the fix, never a traceback."""
    try:
        meter = openers[name](arg)
    except MeterUnavailable as exc:
        return None, ProbeResult(name, False, exc.what, exc.fix)
    except Exception as exc:  # a library misbehaving must not stop the other sources from being tried
        return None, ProbeResult(name, False, f"{type(exc).__name__}: {exc}", "report this as a spectop bug")
    return meter, ProbeResult(name, True, summarize(meter.info), info=meter.info)


def choose_meter(
    spec: str = "auto", *, openers: Mapping[str, Opener] | None = None, order: Sequence[str] | None = None
) -> MeterChoice:
    """Open what `spec` names; `auto` tries `order` (the local meters in METERS) and keeps the first that works."""
    name, arg = parse_spec(spec)
    order = order if order is not None else [m.name for m in METERS if m.local]
    if name == "none":
        return MeterChoice(None, (ProbeResult("none", True, "no meter: energy figures are left out"),))
    openers = openers if openers is not None else default_openers()
    results = []
    for candidate in order if name == "auto" else (name,):
        meter, result = try_open(candidate, None if name == "auto" else arg, openers)
        results.append(result)
        if meter is not None:
            _attach(meter, results)
            return MeterChoice(meter, tuple(results))
    if name == "auto":
        why = "; ".join(f"{r.name}: {r.message}" for r in results)
        raise MeterUnavailable(f"no power meter works here ({why})", "use --meter none to run without energy")
    raise MeterUnavailable(f"meter {shown(spec)!r}: {results[0].message}", results[0].fix)


def _attach(meter: Meter, results: list[ProbeResult]) -> None:
    try:  # lets the UI show why better sources were skipped without carrying a second object around
        meter.probe_results = tuple(results)  # type: ignore[attr-defined]
    except AttributeError:
        pass


def open_meter(spec: str = "auto") -> Meter | None:
    """The meter `spec` names, with `probe_results` set on it; None for `none`.

    Raises MeterUnavailable (what failed, and the fix) when the named meter, or for `auto` every
    local source, cannot be opened.
    """
    return choose_meter(spec).meter


@contextmanager
def sampling(spec: str = "auto", *, watching: bool = False) -> Iterator[Sampler | None]:
    """A started sampler on the meter `spec` names (None for `none`); stopped and closed on the way
    out. `watching`: read as often as a watcher needs (`watching_rate_hz`), not a sweep."""
    meter = open_meter(spec)
    rate_hz = watching_rate_hz(meter.info) if meter and watching else None
    sampler = Sampler(meter, rate_hz).start() if meter else None
    try:
        yield sampler
    finally:
        if sampler:
            sampler.stop()
        if meter:
            meter.close()


def probe_all(
    openers: Mapping[str, Opener] | None = None, order: Sequence[str] = AUTO_ORDER
) -> list[ProbeResult]:
    """Try every local source, closing each again: for `spectop doctor`."""
    openers = openers if openers is not None else default_openers()
    results = []
    for name in order:
        meter, result = try_open(name, None, openers)
        if meter is not None:
            meter.close()
        results.append(result)
    return results


def describe_meters() -> tuple[tuple[str, str], ...]:
    """(spec, what it reads) for every meter, for help screens."""
    return METER_SPECS
