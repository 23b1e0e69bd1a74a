"""spectop's own derived figures as a Prometheus endpoint, for fleets that already run Prometheus.

A poll loop feeds a LiveLedger; scrapes read it under a lock (prometheus_client serves them from
its own thread). Every series carries the server and the meter's method, so an estimate is never
mistaken for a measurement downstream. A poll that raises is a failed poll (`spectop_up` 0), never
the end of the loop: an exporter left running must outlive one bad answer.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from collectors.fmt import printable
from collectors.live import LiveLedger
from collectors.meters.sampler import Sampler
from collectors.servers.answers import error_snapshot


class SpectopExporter(Collector):
    """Polls one server (any spectop collector) and exposes drafting, throughput and energy gauges."""

    def __init__(self, collector, sampler: Sampler | None, energy_window_s: float = 30.0) -> None:
        self.collector, self.sampler = collector, sampler
        self.live = LiveLedger(energy_window_s, sampler.meter.info if sampler else None)
        self._lock = threading.Lock()
        self._meter_t_s: float | None = None

    def update(self, snapshot) -> None:
        """Add one poll and the meter readings since the last one."""
        with self._lock:
            self.live.add_snapshot(snapshot)
            if self.sampler is None:
                return
            for r in self.sampler.readings(since_t_s=self._meter_t_s):
                if self._meter_t_s is not None and r.t_s <= self._meter_t_s:
                    continue
                self._meter_t_s = r.t_s
                self.live.add_reading(r)  # an energy-only meter's power comes from the energy slope

    async def run(self, interval_s: float, should_stop: Callable[[], bool]) -> None:
        """Poll every `interval_s` until `should_stop()`, which is looked at every 0.1 s at least.

        Stopping is asked, not done by cancelling the task: Python 3.11's `asyncio.wait_for` (under
        every bounded page read) can swallow a cancellation that lands as the read completes, which
        on a loaded machine left Ctrl-C unanswered.
        """
        while not should_stop():
            started = time.monotonic()
            self.update(await self.poll())
            await asyncio.sleep(0.05)
            while not should_stop() and (left_s := interval_s - (time.monotonic() - started)) > 0:
                await asyncio.sleep(min(0.1, left_s))

    async def poll(self):
        """The collector's next snapshot; one saying why, when the poll itself failed."""
        try:
            return await self.collector.poll()
        except Exception as exc:  # the loop must outlive anything one answer does
            return error_snapshot(
                getattr(self.collector, "url", ""), getattr(self.collector, "backend", "unknown"), exc
            )

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            snap, rolling, drafting = self.live.latest, self.live.rolling(), self.live.drafting()
            idle_w, batch = self.live.idle_w(), self.live.current_batch()
            power = self.live.power[-1] if self.live.power else None
        info = self.sampler.meter.info if self.sampler else None
        names = ["server", "backend", "meter", "method"]
        values = [  # label values stay printable: whoever curls the page sees them raw
            printable(v)
            for v in (
                getattr(self.collector, "url", ""),
                snap.backend if snap else "unknown",
                info.name if info else "none",
                info.method if info else "none",
            )
        ]

        def gauge(name: str, doc: str, value: float | None) -> Iterator[Metric]:
            if value is not None:
                family = GaugeMetricFamily(f"spectop_{name}", doc, labels=names)
                family.add_metric(values, float(value))
                yield family

        yield from gauge("up", "1 when the server answered the last poll", 1.0 if snap and snap.ok else 0.0)
        if snap is not None:
            yield from gauge(
                "drafting",
                "1 when the server drafts",
                None if snap.drafting is None else float(snap.drafting),
            )
            yield from gauge(
                "tokens_per_second",
                "tokens generated per second, in-flight requests included",
                snap.live_tok_s,
            )
            yield from gauge("busy_slots", "requests running now", snap.slots_busy)
            yield from gauge("slots", "request slots the server has", snap.slots_total)
        if drafting is not None:  # over the rolling window, like mJ/token (collectors/drafting.py)
            yield from gauge(
                "draft_acceptance_ratio", "accepted over drafted tokens, rolling window", drafting.acceptance
            )
            yield from gauge(
                "mean_committed_advance",
                "tokens committed per verify step, every step counted (G), rolling window",
                drafting.mean_advance,
            )
            yield from gauge(
                "verified_width", "positions verified per step, rolling window", drafting.verified_width
            )
        yield from gauge("requests_per_decode", "requests per target forward pass (the actual batch)", batch)
        yield from gauge("power_watts", "power now, from the meter", power.power_w if power else None)
        yield from gauge("idle_power_watts", "idle baseline", idle_w)
        yield from gauge("mj_per_token", "window joules over window tokens, gross", rolling.mj_per_token)
        yield from gauge(
            "net_mj_per_token", "window joules above idle over window tokens", rolling.net_mj_per_token
        )
        if power is not None:
            counter = CounterMetricFamily(
                "spectop_energy_joules", "energy the meter counted since spectop started", labels=names
            )
            counter.add_metric(values, power.energy_j)
            yield counter
