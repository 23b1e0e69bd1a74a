"""/metrics pages as prometheus_client's multiprocess collector renders them, several processes' files merged.

vLLM with more than one API server (`--api-server-count > 1`, the default under data parallelism)
serves its page from `MultiProcessCollector` (vllm/v1/metrics/prometheus.py:39-53 in 0.33): each
API server process writes its own values to mmap files in PROMETHEUS_MULTIPROC_DIR and the page is
their merge. What that merge does, and the fakes must too: counters and histograms are summed over
processes; a gauge is merged by its `multiprocess_mode` (`mostrecent`: the newest write wins, no
`pid` label; `all`, the default: one series per process, with a `pid` label); no `*_created`
samples and no `process_*` series. The files are written with prometheus_client's own writer
(`MmapedDict`, `mmap_key`), so the page is the library's rendering, not a copy of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector

Labels = dict[str, str]


class MultiprocessDir:
    """One PROMETHEUS_MULTIPROC_DIR: what each process (`pid`) wrote, rendered as one page."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, MmapedDict] = {}

    def _write(
        self, file: str, metric: str, sample: str, labels: Labels, doc: str, value: float, t: float
    ) -> None:
        if file not in self._files:
            self._files[file] = MmapedDict(str(self.path / file))
        key = mmap_key(metric, sample, list(labels), list(labels.values()), doc)
        self._files[file].write_value(key, value, t)

    def counter(self, pid: int, name: str, doc: str, labels: Labels, value: float) -> None:
        """A counter as `Counter(name)` keeps it: the sample is `<name>_total`."""
        self._write(f"counter_{pid}.db", name, f"{name}_total", labels, doc, value, 0.0)

    def gauge(
        self, pid: int, name: str, doc: str, labels: Labels, value: float, mode: str = "all", t: float = 0.0
    ) -> None:
        """A gauge in `mode` (the source's multiprocess_mode; prometheus_client's default is `all`),
        written at wall time `t` (what `mostrecent` compares)."""
        self._write(f"gauge_{mode}_{pid}.db", name, name, labels, doc, value, t)

    def histogram(
        self,
        pid: int,
        name: str,
        doc: str,
        labels: Labels,
        count: float,
        total: float,
        bounds: Sequence[float],
    ) -> None:
        """`count` observations summing to `total`, every one in the lowest bucket (only counts matter)."""
        for i, bound in enumerate([*bounds, float("inf")]):
            le = "+Inf" if bound == float("inf") else str(float(bound))
            value = count if i == 0 else 0.0  # per-bucket counts; the collector accumulates them
            self._write(f"histogram_{pid}.db", name, f"{name}_bucket", {**labels, "le": le}, doc, value, 0.0)
        self._write(f"histogram_{pid}.db", name, f"{name}_sum", labels, doc, total, 0.0)

    def page(self) -> str:
        for mapped in self._files.values():
            mapped.close()
        self._files.clear()
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(self.path))
        return generate_latest(registry).decode()
