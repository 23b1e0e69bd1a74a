"""What the dashboard's workers do: poll the servers, hand over meter readings, probe, follow a log,
serve the capture proxy and sweep. Each function only posts messages (`post`, thread-safe); the
App's thin `@work` wrappers (tui/app.py) run them and its handlers own the state. A loop ends when
`stopped()` says its worker was cancelled.

Pitfall handled: a poll that raises is a failed poll, posted like any other, so one bad answer
never ends polling and the top bar never stays at "ok" after the server is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable

from textual.message import Message
from textual.worker import get_current_worker

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters import Sampler
from collectors.meters.sampler import start_marks
from collectors.requests.client import RequestSpec, stream_request
from collectors.requests.listen import bind
from collectors.requests.logfollow import LogFollower
from collectors.requests.record import RequestRecord
from collectors.servers import default_route, registry
from collectors.servers.answers import error_snapshot
from collectors.servers.server_log import OWN_MATCH_S, LogReader
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.request import SweepRequest, run_request
from tui import messages
from tui.config import Settings
from tui.fleet import Fleet, WatchedServer

LATE_POLL_S = 0.5  # a poll this late: the meters' readings are handed over without it, and so on
LOG_RETRY_S = 2.0  # a log that cannot be read now is tried again this often

Post = Callable[[Message], object]  # App.post_message: safe from any thread
Stopped = Callable[[], bool]


def cancelled() -> Stopped:
    """The running worker's cancellation, as a flag to check (a thread cannot be cancelled from outside)."""
    worker = get_current_worker()
    return lambda: worker.is_cancelled


async def poll_servers(
    fleet: Fleet, interval_s: float, post: Post, stopped: Stopped, with_meters: bool = False
) -> None:
    """Poll every server each `interval_s` (none while paused) and post each one's snapshot;
    `with_meters`: hand over the meters' new readings with each snapshot (`read_meters`), so no
    timer of its own wakes the UI thread between polls, and no message of their own is handled."""
    # the flag, not only the cancellation: a cancellation that lands as a bounded page read
    # completes can be swallowed by Python 3.11's wait_for (collectors/export/exporter.py)
    while not stopped():
        started = time.monotonic()
        if not fleet.state.paused:
            marks = start_marks(server.sampler for server in fleet.servers)
            polls = asyncio.gather(*(poll_one(server) for server in fleet.servers))
            snapshots = await (_meters_while(polls, fleet, post) if with_meters else polls)
            if marks is not None:
                await marks
            reads: list[messages.MeterRead] = []
            if with_meters:  # the poll's mark is among them: its window's energy goes in first
                read_meters(fleet, reads.append)  # type: ignore[arg-type]  # only MeterRead is posted
            by_server = {read.server: read for read in reads}
            for index, snapshot in enumerate(snapshots):  # one message each: the readings ride with it
                post(messages.ServerPolled(snapshot, server=index, meter=by_server.get(index)))
        await asyncio.sleep(max(0.05, interval_s - (time.monotonic() - started)))


async def _meters_while(
    polls: asyncio.Future[list[ServerSnapshot]], fleet: Fleet, post: Post
) -> list[ServerSnapshot]:
    """`polls`' snapshots; while they are late (a server that hangs until its timeout), the meters'
    readings are handed over every `LATE_POLL_S` without them."""
    try:
        while not (await asyncio.wait({polls}, timeout=LATE_POLL_S))[0]:
            read_meters(fleet, post)
    except asyncio.CancelledError:
        polls.cancel()  # asyncio.wait leaves what it waits on running
        with contextlib.suppress(asyncio.CancelledError):
            await polls
        raise
    return polls.result()


async def poll_one(server: WatchedServer) -> ServerSnapshot:
    try:
        return await server.collector.poll()
    except Exception as exc:  # one bad answer must not end polling
        return failed_poll(server, exc)


def failed_poll(server: WatchedServer, exc: Exception) -> ServerSnapshot:
    """The snapshot of a poll that raised `exc`: the server is shown as failing, with why."""
    return error_snapshot(server.url, getattr(server.collector, "backend", "unknown"), exc)


def read_meters(fleet: Fleet, post: Post) -> None:
    """Post each server's new sampler readings; the sampler's own thread does the reading.

    A meter shared by several servers hands each of them its readings (tui/fleet.py splits the joules).
    """
    if fleet.state.paused:
        return
    for index, server in enumerate(fleet.servers):
        sampler = server.sampler
        if sampler is None:
            continue
        readings = sampler.readings(since_t_s=server.meter_t_s)
        readings = [r for r in readings if server.meter_t_s is None or r.t_s > server.meter_t_s]
        if readings:
            server.meter_t_s = readings[-1].t_s
        error = sampler.last_error if sampler.failed_ticks else None
        shown_error = printable(error) if error else None  # a remote meter's error may quote its page
        if readings or shown_error != server.meter_error:  # nothing new: no message, no handler
            post(messages.MeterRead(readings, shown_error, server=index))


async def probe(server: WatchedServer, api_key: str | None, post: Post) -> None:
    """Send one streamed request to `server` and post its record, or why it failed."""
    snap = server.state.latest
    dialect = snap.backend if snap else registry.default_backend()
    spec = RequestSpec(route=default_route(dialect), dialect=dialect)
    try:
        async with make_client(api_key, STREAM_TIMEOUT) as client:
            record = await stream_request(
                client,
                server.url,
                spec,
                busy_probe=getattr(server.collector, "busy_slots", None),
                tag="probe",
                mark=server.sampler.mark if server.sampler and server.sampler.reads_on_marks else None,
            )
        post(messages.ProbeFinished(record))
    except SpectopError as exc:
        post(messages.ProbeFinished(None, str(exc)))


def follow_server_log(settings: Settings, post: Post, stopped: Stopped) -> None:
    """Follow the server's log (`--server-log`) on this thread; post the requests it reports
    finished, and the reader's state whenever it changes: a log that cannot be read (not there,
    root's only, a device) is said in the source bar for as long as it lasts, and tried again."""
    path = settings.server_log
    assert path is not None
    # held past their end so an own request's record, which ends a moment later, comes first
    reader = LogReader(hold_s=OWN_MATCH_S + 0.5)
    follower: LogFollower | None = None
    said: tuple[str, bool] | None = None

    def say(text: str, problem: bool = False) -> None:
        nonlocal said
        if said != (text, problem):
            said = (text, problem)
            post(messages.LogReaderState(text, problem))

    try:
        while not stopped():
            try:
                follower = follower or LogFollower(path, stdin_fd=settings.server_log_fd)
                lines = follower.poll(timeout_s=0.25)
            except SpectopError as exc:
                say(f"{exc.what} ({exc.fix})" if exc.fix else exc.what, problem=True)
                if follower is not None:
                    follower.close()
                follower = None
                time.sleep(LOG_RETRY_S)
                continue
            if not lines and path != "-":
                time.sleep(0.25)
            requests = reader.feed(lines)
            if requests:
                post(messages.LogRequestsRead(requests))
            if path != "-" and not os.path.exists(path):
                say(f"waiting for {path} to appear")
            else:
                say(log_state(path, reader.skipped_lines, follower.long_lines))
    finally:
        if follower is not None:
            follower.close()


def log_state(path: str, skipped_lines: int, long_lines: int) -> str:
    """`reading PATH`, and what it skipped."""
    skipped = [
        f"{n} {what} skipped"
        for n, what in ((skipped_lines, "unreadable lines"), (long_lines, "overlong lines"))
        if n
    ]
    return f"reading {'standard input' if path == '-' else path}" + (
        f" ({', '.join(skipped)})" if skipped else ""
    )


def run_proxy(settings: Settings, post: Post, stopped: Stopped) -> None:
    """The capture proxy (`--proxy`) on this thread's own loop; posts each request's record."""
    from collectors.requests.proxy_server import serve  # uvicorn: loaded only for --proxy

    assert settings.proxy is not None
    sock = bind(settings.proxy)

    def recorded(record: RequestRecord) -> None:
        post(messages.ProxyRequestRecorded(record))

    serve(settings.server_url, sock, recorded, stopped, route=settings.route, api_key=settings.api_key)


def sweep(
    request: SweepRequest, sampler: Sampler | None, settings: Settings, post: Post, stopped: Stopped
) -> None:
    """The sweep engine on this thread; each of its events is posted, in order."""
    for event in run_request(request, sampler, settings.results_root, stopped, settings.api_key):
        post(messages.SweepProgressed(event))
