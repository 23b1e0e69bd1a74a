"""Labelled Prometheus series from two scrapes: sums over label sets, window deltas, resets.

Counters are compared one full label set at a time (collectors/docs/servers.md): a window's
delta is the sum of each series' growth, a series new since the last scrape counts from zero,
and any series that went down means the server restarted. `*_created` samples have their own
names, so they never enter a sum. A draft `position` label that is not a whole number and a
value that is not finite read as unknown, never as an exception.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from collectors.promtext import Sample

Samples = Mapping[str, list[Sample]]
Key = tuple[tuple[str, str], ...]
Keep = Callable[[Mapping[str, str]], bool]


def series(
    samples: Samples | None, name: str, keep: Keep | None = None, dedupe: Iterable[str] = ()
) -> dict[Key, float]:
    """Value by label set, `dedupe` labels left out; of series equal without them, the first counts.

    `dedupe` is for copies of one figure (SGLang publishes one per tp_rank with
    --enable-metrics-for-all-schedulers); labels that split a figure (engine, dp_rank) stay.
    """
    dropped = frozenset(dedupe)
    out: dict[Key, float] = {}
    rows = sorted((samples or {}).get(name, []), key=lambda s: sorted(s.labels.items()))
    for sample in rows:
        if keep is not None and not keep(sample.labels):
            continue
        key = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in dropped))
        out.setdefault(key, sample.value)
    return out


def total(
    samples: Samples | None, name: str, keep: Keep | None = None, dedupe: Iterable[str] = ()
) -> float | None:
    """The sum over label sets, or None when the metric is absent."""
    rows = series(samples, name, keep, dedupe)
    return sum(rows.values()) if rows else None


def by_label(
    samples: Samples | None, name: str, label: str, keep: Keep | None = None, dedupe: Iterable[str] = ()
) -> dict[str, float]:
    """Sums grouped by one label's value (e.g. per draft `position`, summed over engines)."""
    out: dict[str, float] = {}
    for key, value in series(samples, name, keep, dedupe).items():
        group = dict(key).get(label, "")
        out[group] = out.get(group, 0.0) + value
    return out


def delta(
    prev: Samples | None, cur: Samples | None, name: str, keep: Keep | None = None, dedupe: Iterable[str] = ()
) -> float | None:
    """Growth between two scrapes summed over label sets; None when either scrape lacks it all."""
    if prev is None or cur is None:
        return None
    after = series(cur, name, keep, dedupe)
    if not after:
        return None
    before = series(prev, name, keep, dedupe)
    return sum(value - before.get(key, 0.0) for key, value in after.items())


def went_back(
    prev: Samples | None,
    cur: Samples | None,
    names: Iterable[str],
    keep: Keep | None = None,
    dedupe: Iterable[str] = (),
) -> bool:
    """True when any counter series present in both scrapes is lower now: a restart."""
    if prev is None or cur is None:
        return False
    for name in names:
        before = series(prev, name, keep, dedupe)
        for key, value in series(cur, name, keep, dedupe).items():
            if key in before and value < before[key]:
                return True
    return False


def stamps_changed(prev: Samples | None, cur: Samples | None, prefix: str) -> bool:
    """True when a `<prefix>…_created` stamp or process_start_time_seconds differs between scrapes."""
    if prev is None or cur is None:
        return False
    names = [
        n
        for n in cur
        if (n.startswith(prefix) and n.endswith("_created")) or n == "process_start_time_seconds"
    ]
    for name in names:
        before = series(prev, name)
        for key, value in series(cur, name).items():
            if key in before and value != before[key]:
                return True
    return False


def label_value(samples: Samples | None, prefix: str, label: str) -> str | None:
    """The first value of `label` on any series whose name starts with `prefix`."""
    for name, rows in (samples or {}).items():
        if name.startswith(prefix):
            for sample in rows:
                if sample.labels.get(label):
                    return sample.labels[label]
    return None


def position_of(labels: Mapping[str, str]) -> int | None:
    """A sample's draft `position` label (0 when it has none); None when it is not a whole number."""
    text = labels.get("position", "0")
    return int(text) if text.isascii() and text.isdigit() else None


def as_int(value: float | None) -> int | None:
    """The nearest whole number; None for None, NaN, infinities and values no counter reaches."""
    return None if value is None or not math.isfinite(value) or abs(value) >= 2**63 else int(round(value))
