"""Prometheus exposition text → plain values, through prometheus_client's own parser."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True, slots=True)
class Sample:
    labels: dict[str, str]
    value: float


def parse(text: str) -> dict[str, list[Sample]]:
    """Every sample by its full name (`..._total` kept), labels and value. Raises ValueError on junk."""
    samples: dict[str, list[Sample]] = defaultdict(list)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[s.name].append(Sample(dict(s.labels), float(s.value)))
    return dict(samples)


def scalar(samples: dict[str, list[Sample]], name: str) -> float | None:
    """The value of an unlabelled metric, or None when absent."""
    rows = samples.get(name)
    return rows[0].value if rows else None
