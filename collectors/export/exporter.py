"""spectop's own derived figures as a Prometheus endpoint, for fleets that already run Prometheus.

One exporter watches one or more servers (`ServerFeed`, each with its own LiveLedger); a poll loop
feeds them all, and scrapes read them under a lock (prometheus_client serves them from its own
thread). Every series carries the server, its model and draft, and the meter's method, so an
estimate is never mistaken for a measurement downstream. A poll that raises is a failed poll
(`spectop_up` 0), never the end of the loop: an exporter left running must outlive one bad answer.

Pitfall handled: one meter under several servers (one GPU's DCGM page, two servers on it) counts
the same joules for each; its energy is then split between them by tokens, like per-request
attribution, and their series say `energy="shared"` (collectors/export/series.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from collectors.export.series import FeedView, series
from collectors.live.accounting import LiveLedger
from collectors.meters.sampler import Sampler, start_marks
from collectors.servers.answers import error_snapshot
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.records import Summary

if TYPE_CHECKING:  # SQLite loads only when a ledger is kept, the schedule's code after a tune
    from collectors.ledgerdb.store import EnergyStore
    from collectors.ledgerdb.writer import LedgerWriter
    from collectors.tune.live import ScheduleTracker
    from collectors.tune.schedule import DraftSchedule

MIN_GAP_S = 0.05  # between one poll's end and the next poll's start, however slow the polls


class Polled(Protocol):
    """What the exporter needs of a server's collector (a dialect's, or AutoCollector)."""

    async def poll(self) -> ServerSnapshot: ...


class ServerFeed:
    """One watched server: its collector, its rolling ledger, and the meter readings taken so far."""

    def __init__(self, collector: Polled | None, sampler: Sampler | None, energy_window_s: float) -> None:
        self.collector, self.sampler = collector, sampler
        self.live = LiveLedger(energy_window_s, sampler.meter.info if sampler else None)
        self._meter_t_s: float | None = None
        self.ledger: LedgerWriter | None = None  # the energy ledger on disk, where one is kept
        self.schedule: ScheduleTracker | None = None  # a tuned schedule's saving (--schedule)

    @property
    def url(self) -> str:
        latest = self.live.latest
        return getattr(self.collector, "url", None) or (latest.url if latest else "")

    def update(self, snapshot: ServerSnapshot) -> None:
        """Add one poll and the meter readings since the last one (caller holds the lock)."""
        self.live.add_snapshot(snapshot)
        if self.sampler is None:
            return
        for r in self.sampler.readings(since_t_s=self._meter_t_s):
            if self._meter_t_s is not None and r.t_s <= self._meter_t_s:
                continue
            self._meter_t_s = r.t_s
            self.live.add_reading(r)  # an energy-only meter's power comes from the energy slope
        if self.ledger is not None:
            self.ledger.flush(self.live)
        if self.schedule is not None:
            self.schedule.update(self.live)

    async def poll(self) -> ServerSnapshot:
        """The collector's next snapshot; one saying why, when the poll itself failed."""
        try:
            assert self.collector is not None, "a feed fed by hand (tests) is not polled"
            return await self.collector.poll()
        except Exception as exc:  # the loop must outlive anything one answer does
            return error_snapshot(self.url, getattr(self.collector, "backend", "unknown"), exc)

    def view(self) -> FeedView:
        live = self.live
        return FeedView(
            url=self.url,
            meter=self.sampler.meter.info if self.sampler else None,
            snapshot=live.latest,
            rolling=live.rolling(),
            drafting=live.drafting(),
            server_latency=live.server_latency(),
            idle_w=live.idle_w(),
            batch=live.current_batch(),
            power=live.power[-1] if live.power else None,
            schedule=self.schedule.view(live) if self.schedule is not None else None,
        )


class SpectopExporter(Collector):
    """Polls its servers and exposes drafting, throughput, energy and verdict gauges for each.

    `summary` is a sweep's summary (collectors/sweep/summary.py): with it, each server's live
    mJ/token is read against the sweep's curves at its current batch (the dashboard's verdict).
    """

    def __init__(
        self,
        collector: Polled | None,
        sampler: Sampler | None,
        energy_window_s: float = 30.0,
        summary: Summary | None = None,
        ledger: EnergyStore | None = None,
    ) -> None:
        self.energy_window_s, self.summary, self.store = energy_window_s, summary, ledger
        self.feeds: list[ServerFeed] = []
        self._lock = threading.Lock()
        self.add_server(collector, sampler)

    @property
    def live(self) -> LiveLedger:
        """The first server's ledger (the only one, for a one-server exporter)."""
        return self.feeds[0].live

    def add_server(self, collector: Polled | None, sampler: Sampler | None) -> ServerFeed:
        """Watch another server; passing the sampler an earlier server has means they share it."""
        feed = ServerFeed(collector, sampler, self.energy_window_s)
        sharing = [f for f in self.feeds if sampler is not None and f.sampler is sampler]
        for other in sharing:  # a shared meter's joules are split by tokens only over a rolling window
            other.ledger = None
        if self.store is not None and sampler is not None and not sharing:
            from collectors.ledgerdb.writer import HOLD_S, LedgerWriter

            feed.ledger = LedgerWriter(self.store, feed.url, self.summary, hold_s=HOLD_S)
        self.feeds.append(feed)
        return feed

    def attach_schedule(self, schedule: DraftSchedule) -> None:
        """Count a tuned schedule's saving on each server with a meter of its own (a shared meter's
        joules are not one server's)."""
        from collectors.tune.live import ScheduleTracker  # loads only after a tune

        for feed in self.feeds:
            if feed.sampler is not None and sum(f.sampler is feed.sampler for f in self.feeds) == 1:
                feed.schedule = ScheduleTracker(schedule)

    def update(self, snapshot: ServerSnapshot, feed: int = 0) -> None:
        """Add one poll of server number `feed` and its meter's readings since the last one."""
        with self._lock:
            self.feeds[feed].update(snapshot)

    async def poll(self) -> ServerSnapshot:
        """The first server's next snapshot (see ServerFeed.poll)."""
        return await self.feeds[0].poll()

    async def run(
        self, interval_s: float, should_stop: Callable[[], bool], stop_event: asyncio.Event | None = None
    ) -> None:
        """Poll every server every `interval_s` until `should_stop()`, looked at every 0.1 s at least;
        with `stop_event` (what sets the flag), the loop sleeps between polls until it is set, waking
        once a poll instead of ten times a second.

        Stopping is asked, not done by cancelling the task: Python 3.11's `asyncio.wait_for` (under
        every bounded page read) can swallow a cancellation that lands as the read completes, which
        on a loaded machine left Ctrl-C unanswered.
        """
        try:
            while not should_stop():
                started = time.monotonic()
                marks = start_marks(feed.sampler for feed in self.feeds)
                if len(self.feeds) == 1:  # no task to poll one server: the loop's cost is per wakeup
                    snapshots = [await self.feeds[0].poll()]
                else:
                    snapshots = await asyncio.gather(*(feed.poll() for feed in self.feeds))
                if marks is not None:
                    await marks
                for index, snapshot in enumerate(snapshots):
                    self.update(snapshot, index)
                # the next poll at its time, and at least 0.05 s after this one ended: one wait, not two
                next_s = max(started + interval_s, time.monotonic() + MIN_GAP_S)
                while not should_stop() and (left_s := next_s - time.monotonic()) > 0:
                    if stop_event is None:
                        await asyncio.sleep(min(0.1, left_s))
                    else:
                        await _until_set(stop_event, left_s)
        finally:  # a stop (Ctrl-C, SIGTERM) leaves every window measured on disk
            self.write_held()

    def write_held(self) -> None:
        """Write the energy-ledger windows each server's writer holds (`run` does as it stops)."""
        with self._lock:
            for feed in self.feeds:
                if feed.ledger is not None:
                    feed.ledger.write_held()

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            views = [feed.view() for feed in self.feeds]
        # a meter under several servers: each server's share of the joules is its share of the tokens
        tokens_on: dict[int, int] = {}
        users_of: dict[int, int] = {}
        for feed, view in zip(self.feeds, views):
            if feed.sampler is not None:
                key = id(feed.sampler)
                tokens_on[key] = tokens_on.get(key, 0) + view.rolling.tokens
                users_of[key] = users_of.get(key, 0) + 1
        for feed, view in zip(self.feeds, views):
            if feed.sampler is not None and users_of[id(feed.sampler)] > 1:
                view.share_tokens = tokens_on[id(feed.sampler)]
        yield from series(views, self.summary)


async def _until_set(event: asyncio.Event, timeout_s: float) -> None:
    """Return when `event` is set or after `timeout_s`; asyncio.wait cancels nothing of the caller's.
    From Python 3.11, `asyncio.timeout` over the wait itself: no task of its own to start and
    cancel each poll (a wakeup of the loop fewer); its expiry cancels only this wait."""
    if sys.version_info >= (3, 11):
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await event.wait()
        return
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait((waiter,), timeout=timeout_s)
    finally:
        waiter.cancel()
