"""A sweep's result as Prometheus series: for `spectop export --sweep` and node_exporter's textfile collector.

A fleet sees the crossover next to live traffic when the sweep's table is a few series: per arm and
batch, mJ/token, tok/s and W; per batch, the draft/plain energy ratio and whether the pair is
trusted; the crossover batch (the ratio's 1.0 crossing) and its break-even band; when the sweep ran. Only trusted pairs carry a ratio (the summary's
own rule, collectors/sweep/checks.py). The file is written atomically by prometheus_client's
`write_to_textfile` (a temporary file renamed over it), so the collector never reads half of it.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, write_to_textfile
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from collectors.errors import SpectopError
from collectors.sweep.records import PairedSummary
from collectors.sweep.store import load_run
from collectors.sweep.summary import is_arms_run, summary_of

ARMS = ("plain", "draft")


def saved_summary(run_dir: Path) -> PairedSummary:
    """The summary of a saved sweep (summarized again from its points, as `spectop report` does)."""
    meta, rows = load_run(run_dir)
    if is_arms_run(meta, rows):
        raise SpectopError(
            f"{run_dir} is a multi-arm run: its series are a paired sweep's",
            "give the folder of a plain-against-draft sweep over batches",
        )
    if not rows:
        raise SpectopError(f"{run_dir} has no sweep points yet", "give a folder of a sweep that measured")
    summary = summary_of(rows, meta)
    assert isinstance(summary, PairedSummary)  # not a multi-arm run, said above
    return summary


def started_unix_s(run_name: str) -> float | None:
    """When a run started, from its folder's name (results/<UTC stamp>[-n]/, collectors/sweep/store.py)."""
    try:
        return float(calendar.timegm(time.strptime(run_name.split("-")[0], "%Y%m%dT%H%M%SZ")))
    except ValueError:
        return None  # a folder the user renamed: the series goes without its start


class SweepSeries(Collector):
    """The series of one sweep summary, labelled with its run folder's name (when it started: from it)."""

    def __init__(self, summary: PairedSummary, run: str = "") -> None:
        self.summary, self.run = summary, run

    def collect(self) -> Iterator[Metric]:
        run = self.run
        per_arm = {
            "mj_per_token": GaugeMetricFamily(
                "spectop_sweep_mj_per_token",
                "gross mJ/token the sweep measured",
                labels=["run", "arm", "batch"],
            ),
            "tok_s": GaugeMetricFamily(
                "spectop_sweep_tokens_per_second",
                "tokens/s the sweep measured",
                labels=["run", "arm", "batch"],
            ),
            "power_w": GaugeMetricFamily(
                "spectop_sweep_power_watts", "mean W the sweep measured", labels=["run", "arm", "batch"]
            ),
        }
        ratio = GaugeMetricFamily(
            "spectop_sweep_energy_ratio",
            "draft over plain mJ/token at the batch (trusted pairs only)",
            labels=["run", "batch"],
        )
        trusted = GaugeMetricFamily(
            "spectop_sweep_trusted", "1 when the batch's pair is trustworthy", labels=["run", "batch"]
        )
        for row in self.summary.rows:
            batch = str(row.batch)
            trusted.add_metric([run, batch], 1.0 if row.trusted else 0.0)
            if row.trusted and row.energy_ratio is not None:
                ratio.add_metric([run, batch], float(row.energy_ratio))
            for arm, figures in zip(ARMS, (row.plain, row.draft)):
                values = (figures.mj_per_token, figures.tok_s, figures.power_w)  # per_arm's order
                for value, family in zip(values, per_arm.values()):
                    if value is not None:
                        family.add_metric([run, arm, batch], float(value))
        yield from per_arm.values()
        yield ratio
        yield trusted
        crossover = self.summary.crossover
        if crossover is not None and crossover.batch_at_1 is not None:
            family = GaugeMetricFamily(
                "spectop_sweep_crossover_batch",
                "the last sweep's crossover: the batch where the draft/plain energy ratio rises through 1.0",
                labels=["run"],
            )
            family.add_metric([run], float(crossover.batch_at_1))
            yield family
        if crossover is not None:
            band = GaugeMetricFamily(
                "spectop_sweep_crossover_band_batch",
                "where the energy ratio rises through the break-even band's edges (edge low: 0.95, high: 1.05)",
                labels=["run", "edge"],
            )
            for edge, at in (("low", crossover.band_low), ("high", crossover.band_high)):
                if at is not None:
                    band.add_metric([run, edge], float(at))
            yield band
        started = started_unix_s(run) if run else None
        if started is not None:
            family = GaugeMetricFamily(
                "spectop_sweep_started_seconds", "when the sweep started (unix time)", labels=["run"]
            )
            family.add_metric([run], started)
            yield family


def write_textfile(summary: PairedSummary, path: Path, run: str = "") -> None:
    """Write the sweep's series where node_exporter's textfile collector reads them (a .prom file)."""
    if path.suffix != ".prom":
        raise SpectopError(
            f"{path} does not end in .prom", "node_exporter's textfile collector reads only *.prom files"
        )
    registry = CollectorRegistry()
    registry.register(SweepSeries(summary, run))
    try:
        write_to_textfile(str(path), registry)
    except OSError as exc:
        raise SpectopError(
            f"cannot write {path}: {exc.strerror}", "check the folder exists and is writable"
        ) from exc
