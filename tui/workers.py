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

from collectors.client import RequestSpec, stream_request
from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.log_requests import OWN_MATCH_S, LogReader
from collectors.logfollow import LogFollower
from collectors.meters import Sampler
from collectors.servers import default_route
from collectors.servers.answers import error_snapshot
from collectors.sweep.arms_runner import run_arms_sweep
from collectors.sweep.runner import run_sweep
from tui import messages
from tui.config import Settings
from tui.state import LiveState
from tui.widgets.sweep_dialog import SweepRequest


class WorkingApp(App[None]):
    """The workers of SpectopApp; it sets these attributes."""

    settings: Settings
    collector: Any  # a ServerCollector, AutoCollector or a test fake: anything with poll()
    sampler: Sampler | None
    state: LiveState
    _meter_t_s: float | None

    @work(exclusive=True, group="poll-server", exit_on_error=False)
    async def poll_server(self) -> None:
        worker = get_current_worker()
        # the flag, not only the cancellation: a cancellation that lands as a bounded page read
        # completes can be swallowed by Python 3.11's wait_for (collectors/exporter.py)
        while not worker.is_cancelled:
            started = time.monotonic()
            if not self.state.paused:
                try:
                    snapshot = await self.collector.poll()
                except Exception as exc:  # one bad answer must not end polling
                    snapshot = self.failed_poll(exc)
                self.post_message(messages.ServerPolled(snapshot))
            await asyncio.sleep(max(0.05, self.settings.interval_s - (time.monotonic() - started)))

    def failed_poll(self, exc: Exception):
        return error_snapshot(self.settings.server_url, getattr(self.collector, "backend", "unknown"), exc)

    def read_meter(self) -> None:
        """Hand new sampler readings to the handler; the sampler's own thread does the reading."""
        if self.sampler is None or self.state.paused:
            return
        readings = self.sampler.readings(since_t_s=self._meter_t_s)
        readings = [r for r in readings if self._meter_t_s is None or r.t_s > self._meter_t_s]
        if readings:
            self._meter_t_s = readings[-1].t_s
        error = self.sampler.last_error if self.sampler.failed_ticks else None
        # a remote meter's error may quote its exporter's page
        self.post_message(messages.MeterRead(readings, printable(error) if error else None))

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def run_probe(self) -> None:
        snap = self.state.latest
        dialect = snap.backend if snap else "llama.cpp"
        spec = RequestSpec(route=default_route(dialect), dialect=dialect)
        try:
            async with make_client(self.settings.api_key, STREAM_TIMEOUT) as client:
                record = await stream_request(
                    client,
                    self.settings.server_url,
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

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def sweep_worker(self, request: SweepRequest) -> None:
        """The sweep engine in a thread; its events come back to the app as messages."""
        worker = get_current_worker()
        stop, root, key = (lambda: worker.is_cancelled), self.settings.results_root, self.settings.api_key
        if request.arms_plan:  # draft lengths or an n-gram arm: the multi-arm sweep
            events = run_arms_sweep(request.arms_plan, request.arms, self.sampler, root, stop, key)
        else:
            paired = (request.arms[0], request.arms[1])
            events = run_sweep(request.plan, paired, self.sampler, root, stop, key)
        for event in events:
            self.post_message(messages.SweepProgressed(event))
