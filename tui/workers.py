"""The dashboard's workers: they poll the server, hand over meter readings, probe and sweep, and
only post messages; the App's handlers (tui/app.py) own the state.

Pitfall handled: a poll that raises is a failed poll, posted like any other, so one bad answer
never ends polling and the top bar never stays at "ok" after the server is gone.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual import work
from textual.app import App
from textual.worker import get_current_worker

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters import Sampler
from collectors.requests.client import RequestSpec, stream_request
from collectors.requests.log_requests import OWN_MATCH_S, LogReader
from collectors.requests.logfollow import LogFollower
from collectors.requests.proxy_server import bind, serve
from collectors.requests.record import RequestRecord
from collectors.servers import default_route
from collectors.servers.answers import error_snapshot
from collectors.sweep.runner import run_sweep
from tui import messages
from tui.config import Settings
from tui.fleet import WatchedServer
from tui.state import LiveState
from tui.widgets.sweep_dialog import SweepRequest


class WorkingApp(App[None]):
    """The workers of SpectopApp; it sets these attributes."""

    settings: Settings
    servers: list[WatchedServer]  # one, or several in one dashboard
    selected: int  # the server the panels show

    @property
    def watched(self) -> WatchedServer:
        return self.servers[self.selected]

    @property
    def collector(self) -> Any:
        """The shown server's collector: a ServerCollector, AutoCollector or a test fake (poll())."""
        return self.watched.collector

    @property
    def sampler(self) -> Sampler | None:
        return self.watched.sampler

    @property
    def state(self) -> LiveState:
        return self.watched.state

    @work(exclusive=True, group="poll-server", exit_on_error=False)
    async def poll_server(self) -> None:
        worker = get_current_worker()
        # the flag, not only the cancellation: a cancellation that lands as a bounded page read
        # completes can be swallowed by Python 3.11's wait_for (collectors/export/exporter.py)
        while not worker.is_cancelled:
            started = time.monotonic()
            if not self.state.paused:
                snapshots = await asyncio.gather(*(self._poll_one(i) for i in range(len(self.servers))))
                for index, snapshot in enumerate(snapshots):
                    self.post_message(messages.ServerPolled(snapshot, server=index))
            await asyncio.sleep(max(0.05, self.settings.interval_s - (time.monotonic() - started)))

    async def _poll_one(self, index: int):
        try:
            return await self.servers[index].collector.poll()
        except Exception as exc:  # one bad answer must not end polling
            return self.failed_poll(exc, index)

    def failed_poll(self, exc: Exception, index: int = 0):
        server = self.servers[index]
        return error_snapshot(server.url, getattr(server.collector, "backend", "unknown"), exc)

    def read_meter(self) -> None:
        """Hand new sampler readings to the handler; the sampler's own thread does the reading.

        A meter shared by several servers hands each of them its readings (tui/fleet.py splits the joules).
        """
        if self.state.paused:
            return
        for index, server in enumerate(self.servers):
            sampler = server.sampler
            if sampler is None:
                continue
            readings = sampler.readings(since_t_s=server.meter_t_s)
            readings = [r for r in readings if server.meter_t_s is None or r.t_s > server.meter_t_s]
            if readings:
                server.meter_t_s = readings[-1].t_s
            error = sampler.last_error if sampler.failed_ticks else None
            # a remote meter's error may quote its exporter's page
            self.post_message(messages.MeterRead(readings, printable(error) if error else None, server=index))

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def run_probe(self) -> None:
        snap = self.state.latest
        dialect = snap.backend if snap else "llama.cpp"
        spec = RequestSpec(route=default_route(dialect), dialect=dialect)
        try:
            async with make_client(self.settings.api_key, STREAM_TIMEOUT) as client:
                record = await stream_request(
                    client,
                    self.watched.url,
                    spec,
                    busy_probe=getattr(self.collector, "busy_slots", None),
                    tag="probe",
                )
            self.post_message(messages.ProbeFinished(record))
        except SpectopError as exc:
            self.post_message(messages.ProbeFinished(None, str(exc)))

    @work(thread=True, exclusive=True, group="server-log", exit_on_error=False)
    def follow_server_log(self) -> None:
        """Follow the server's log (`--server-log`); post the requests it reports finished."""
        worker = get_current_worker()
        path = self.settings.server_log
        assert path is not None
        follower = LogFollower(path, stdin_fd=self.settings.server_log_fd)
        # held past their end so an own request's record, which ends a moment later, comes first
        reader = LogReader(hold_s=OWN_MATCH_S + 0.5)
        try:
            while not worker.is_cancelled:
                lines = follower.poll(timeout_s=0.25)
                if not lines and path != "-":
                    time.sleep(0.25)
                requests = reader.feed(lines)
                if requests:
                    self.post_message(messages.LogRequestsRead(requests))
        finally:
            follower.close()

    @work(thread=True, exclusive=True, group="proxy", exit_on_error=False)
    def run_proxy(self) -> None:
        """The capture proxy (`--proxy`) on this thread's own loop; posts each request's record."""
        worker = get_current_worker()
        assert self.settings.proxy is not None
        sock = bind(self.settings.proxy)

        def post(record: RequestRecord) -> None:
            self.post_message(messages.ProxyRequestRecorded(record))  # thread-safe

        serve(self.settings.server_url, sock, post, lambda: worker.is_cancelled)

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def sweep_worker(self, request: SweepRequest) -> None:
        """The sweep engine in a thread; its events come back to the app as messages."""
        worker = get_current_worker()
        stop, root, key = (lambda: worker.is_cancelled), self.settings.results_root, self.settings.api_key
        # draft lengths or an n-gram arm make it a multi-arm sweep; else the paired one, plain and draft
        plan = request.arms_plan or request.plan
        arms = request.arms if request.arms_plan else request.arms[:2]
        events = run_sweep(plan, arms, self.sampler, root, stop, key)
        for event in events:
            self.post_message(messages.SweepProgressed(event))
