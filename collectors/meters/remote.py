"""What remote sources share: picking GPU and RAPL series out of Prometheus samples, and totalling them."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from collectors.errors import MeterUnavailable
from collectors.fmt import number_in
from collectors.meters.accumulate import CounterTracker, PowerIntegrator
from collectors.meters.base import MeterReading
from collectors.meters.plausible import DEFAULT_BOUND_W
from collectors.promtext import Sample
from collectors.url_auth import shown, without_userinfo

DCGM_ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"  # counter, mJ, since the driver loaded
DCGM_POWER = "DCGM_FI_DEV_POWER_USAGE"  # gauge, W (NVML's 1 s average on Ampere and newer)
OPTIONS = ("period", "host")  # spectop's own URL parameters, removed before the request
MAX_PERIOD_S = 3600.0  # exporters collect every few seconds to a minute; an hour is the sanity bound
_NODE_RAPL = re.compile(r"^node_rapl_(?:(\w+)_)?joules$")
_TOP_ZONE = re.compile(r"intel-rapl:\d+$")  # package zones; subzones have a second colon
_ANY_ZONE = re.compile(r"intel-rapl:\d+(?::\d+)?$")  # never intel-rapl-mmio


@dataclass(frozen=True, slots=True)
class Series:
    """One physical device in one scrape, after deduplication."""

    key: str  # stable identity: "host/GPU-uuid" or "host/.../intel-rapl:0"
    device: str  # human name for MeterInfo.devices
    energy_j: float | None = None  # raw cumulative counter value, converted to joules
    power_w: float | None = None
    mig: bool = False


def base_name(name: str) -> str:
    # prometheus_client's parser appends `_total` to counter samples (DCGM's counter has none),
    # and node_exporter's names carry it: compare names without it.
    return name[:-6] if name.endswith("_total") else name


def split_url(url: str, default_path: str) -> tuple[str, dict[str, str]]:
    """Add a scheme and default path, and take spectop's options (`?period=1&host=a`) off the URL."""
    if "://" not in url:
        url = "http://" + url
    url = without_userinfo(url)  # a password is kept for the requests, never shown
    parts = urlsplit(url)
    if not parts.netloc:
        raise MeterUnavailable(f"not a URL: {shown(url)!r}", "e.g. dcgm=http://gpu-box:9400/metrics")
    query = parse_qsl(parts.query)
    ours = {k: v for k, v in query if k in OPTIONS}
    rest = urlencode([(k, v) for k, v in query if k not in OPTIONS])
    path = parts.path.rstrip("/") or default_path
    return urlunsplit((parts.scheme, parts.netloc, path, rest, "")), ours


def period_option(options: Mapping[str, str], default_s: float) -> float:
    text = options.get("period")
    if text is None:
        return default_s
    # NaN, infinite or a day-long period would make every staleness and quantization bound useless
    period_s = number_in(text.rstrip("s"), 0, MAX_PERIOD_S, above_low=True)
    if period_s is None:
        raise MeterUnavailable(
            f"bad period {text!r}: give seconds above 0, up to {MAX_PERIOD_S:g}", "e.g. ?period=1"
        )
    return period_s


def _reading(value: float) -> bool:
    """A value a counter or a power gauge can hold: NaN (no data), infinities and negatives are none."""
    return math.isfinite(value) and value >= 0


def dcgm_series(samples: Iterable[Sample], host: str | None = None) -> list[Series]:
    """One series per (host, UUID). MIG rows (GPU_I_ID) repeat the whole GPU's value: keep one."""
    rows: dict[str, dict[str, object]] = {}
    for sample in samples:
        metric, labels, value = base_name(sample.name), sample.labels, sample.value
        if metric not in (DCGM_ENERGY, DCGM_POWER) or not _reading(value):
            continue
        node = labels.get("Hostname") or labels.get("hostname") or labels.get("instance") or ""
        if host is not None and host not in (node, labels.get("instance")):
            continue
        uuid = labels.get("UUID") or f"gpu{labels.get('gpu', '?')}"
        row = rows.setdefault(f"{node}/{uuid}", {"labels": labels})
        row["mig"] = bool(row.get("mig")) or "GPU_I_ID" in labels
        field = "energy_j" if metric == DCGM_ENERGY else "power_w"
        row.setdefault(field, value / 1000.0 if metric == DCGM_ENERGY else value)
    out = []
    for key, row in rows.items():
        first = row["labels"]  # the labels of the GPU's first row name it
        assert isinstance(first, Mapping)
        node = key.split("/", 1)[0]
        device = f"{first.get('modelName', 'GPU')} #{first.get('gpu', '?')}" + (f" @{node}" if node else "")
        energy, power = row.get("energy_j"), row.get("power_w")
        out.append(Series(key, device, energy, power, bool(row["mig"])))  # type: ignore[arg-type]
    return sorted(out, key=lambda s: s.key)


def node_rapl_series(samples: Iterable[Sample], host: str | None = None) -> list[Series]:
    """node_exporter RAPL counters (J): package zones and DRAM, filtered on `path` like local RAPL."""
    out: dict[str, Series] = {}
    for sample in samples:
        labels, value = sample.labels, sample.value
        m = _NODE_RAPL.match(base_name(sample.name))
        if not m or not _reading(value):
            continue
        zone = m.group(1) or labels.get("rapl_zone", "")  # --collector.rapl.enable-zone-label
        path = labels.get("path", "")
        instance = labels.get("instance", "")
        if host is not None and host != instance and not instance.startswith(host + ":"):
            continue
        if zone.startswith("package"):
            ok = _TOP_ZONE.search(path) if path else True
        elif zone == "dram":
            ok = _ANY_ZONE.search(path) if path else True
        else:
            ok = False  # core, uncore, psys overlap the package
        if ok:
            key = f"{instance}/{path or zone + labels.get('index', '')}"
            where = f" @{instance}" if instance else ""
            out.setdefault(key, Series(key, f"CPU {zone}-{labels.get('index', '?')}{where}", value))
    return sorted(out.values(), key=lambda s: s.key)


class RemoteTotals:
    """Cumulative joules over every device ever seen; counters may reset, power is integrated.

    A counter that runs back by more than a reset could explain (see `CounterTracker`) adds nothing
    and marks the reading's `fault`, so the window it falls in is flagged rather than given
    megajoules.
    """

    def __init__(self, device_max_w: float = DEFAULT_BOUND_W) -> None:
        self._counters: dict[str, CounterTracker] = {}
        self._integrals: dict[str, PowerIntegrator] = {}
        self._device_max_w = device_max_w
        self.resets = 0

    def update(self, t_s: float, series: Iterable[Series]) -> MeterReading:
        powers: list[float | None] = []
        faults = []
        for s in series:
            if s.energy_j is not None:
                tracker = self._counters.setdefault(s.key, CounterTracker(max_rate=self._device_max_w))
                tracker.delta(s.energy_j, t_s)
                if tracker.fault:
                    faults.append(f"{s.device}: {tracker.fault} J")
            elif s.power_w is not None:
                self._integrals.setdefault(s.key, PowerIntegrator()).add(t_s, s.power_w)
            powers.append(s.power_w)
        # A device missing from one scrape keeps its total: the sum never drops.
        self.resets = sum(c.resets for c in self._counters.values())
        energy_j = sum(c.total for c in self._counters.values())
        energy_j += sum(i.energy_j for i in self._integrals.values())
        power_w = sum(p for p in powers if p is not None) if powers and None not in powers else None
        return MeterReading(t_s=t_s, energy_j=energy_j, power_w=power_w, fault="; ".join(faults) or None)
