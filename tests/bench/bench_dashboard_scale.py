"""The dashboard at scale: frame time with 256 request rows and an hour of history, memory as time
goes on, and startup time to the first frame.

Run by hand (not collected by pytest): `python tests/bench/bench_dashboard_scale.py [--minutes 16]`.

1. Frame time. The app runs headless (`Settings(poll=False)`, so every message repaints: the worst
   case) at 160x45 with the requests tab showing, after an hour of simulated traffic: 3,600 polls,
   36,000 meter readings at 10 Hz, 200 of spectop's own request records, and 56 busy server slots,
   256 rows in all. Then per simulated second: two meter reads (5 readings each) and a poll in which
   every busy slot's token count moves. UI-thread CPU per update (`time.thread_time`, the handler
   plus `pilot.pause()`, which repaints), medians and p90.
2. Memory. A fresh app, traced by tracemalloc from its first message, runs `--minutes` of
   simulated time (56 busy slots, 10 Hz meter, a new record every 3 s, the oldest dropping out at
   200); the heap and the process RSS are printed each simulated minute, then what grew, by source
   line, from minute 11 (every kept history full) to the last.
3. Startup: wall time from starting `spectop --meter none` in a 160x45 pseudo-terminal until the
   panels' titles reach the terminal, median of 5 (no server is listening: the first frame says so).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import gc
import os
import pty
import statistics
import struct
import subprocess
import sys
import termios
import time
import tracemalloc

import psutil

from collectors.launch.process import free_port
from tests.bench.bench_dashboard_refresh import T0_S, Timeline, measure
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings

COLS, ROWS = 160, 45
HOUR_S, RECORDS, SLOTS = 3600, 200, 56
RECORD_EVERY_S = 3
FULL_AT_MIN = 11  # by then the 300 polls, 3,000 readings and 200 records kept are all full


def slots_at(t: int) -> tuple[tuple[int, int], ...]:
    """SLOTS busy slots, each decoding 20 tokens a second."""
    return tuple((slot, 20 * t + slot) for slot in range(SLOTS))


def one_second(app: SpectopApp, timeline: Timeline, t: int) -> None:
    for _ in range(2):
        app.on_meter_read(messages.MeterRead(timeline.readings(5)))
    app.on_server_polled(messages.ServerPolled(timeline.poll(slots_at(t))))


def record_at(i: int):
    return synthetic.record("draft-simple", f"r{i}", T0_S + i * RECORD_EVERY_S + 0.2, "probe")


async def frames(rounds: int) -> None:
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    timeline = Timeline()
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        for t in range(HOUR_S):  # an hour of history, painted every simulated minute only
            app.on_meter_read(messages.MeterRead(timeline.readings(10)))
            app.on_server_polled(messages.ServerPolled(timeline.poll(slots_at(t))))
            if t % RECORD_EVERY_S == 0:
                app.add_records([record_at(t // RECORD_EVERY_S)])
            if t % 60 == 0:
                await pilot.pause()
        await pilot.pause()
        table = app.query_one("#requests-table")
        print(f"after {HOUR_S} s of history: {table.row_count} request rows")
        costs: dict[str, list[float]] = {"meter read": [], "poll (56 slots move)": [], "nothing": []}
        t = HOUR_S
        for _ in range(rounds):
            meter = messages.MeterRead(timeline.readings(5))
            costs["meter read"].append(await measure(pilot, lambda m=meter: app.on_meter_read(m)))
            poll = messages.ServerPolled(timeline.poll(slots_at(t)))
            costs["poll (56 slots move)"].append(await measure(pilot, lambda p=poll: app.on_server_polled(p)))
            costs["nothing"].append(await measure(pilot, lambda: None))
            t += 1
        print(f"UI-thread ms per update, {table.row_count} rows, {COLS}x{ROWS}, {rounds} rounds:")
        for name, values in costs.items():
            values = sorted(values)
            p90 = values[int(0.9 * (len(values) - 1))]
            print(f"  {name:<22} median {statistics.median(values):6.2f}  p90 {p90:6.2f}")


async def memory(minutes: int) -> None:
    """The heap of a fresh app from its first message on (everything it holds is traced), a minute
    at a time, and what grew from the minute the kept histories are full (10) to the last."""
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    timeline, process, t = Timeline(), psutil.Process(), 0
    tracemalloc.start()
    full: tracemalloc.Snapshot | None = None
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        for minute in range(minutes + 1):
            for _ in range(60):
                one_second(app, timeline, t)
                if t % RECORD_EVERY_S == 0:
                    app.add_records([record_at(t // RECORD_EVERY_S)])
                t += 1
                if t % 10 == 0:
                    await pilot.pause()
            await pilot.pause()
            gc.collect()
            traced_mb, rss_mb = tracemalloc.get_traced_memory()[0] / 1e6, process.memory_info().rss / 1e6
            print(f"  minute {minute:2d}: python heap {traced_mb:7.2f} MB (traced)  RSS {rss_mb:7.1f} MB")
            if minute == FULL_AT_MIN:
                full = tracemalloc.take_snapshot()
        last = tracemalloc.take_snapshot()
    tracemalloc.stop()
    if full is not None and minutes > FULL_AT_MIN:
        print(f"what grew from minute {FULL_AT_MIN} to {minutes} (histories full), by line:")
        for stat in last.compare_to(full, "lineno")[:6]:
            print(f"  {stat.size_diff / 1e3:+8.1f} kB  {stat.traceback.format()[0].strip()}")


def startup_s() -> float:
    """Seconds from exec to the panels' titles on the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    argv = [sys.executable, "-m", "tui", "--server", f"http://127.0.0.1:{free_port()}", "--meter", "none"]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        while b"energy per token" not in seen:
            chunk = os.read(master, 65536)
            if not chunk:
                raise RuntimeError("the dashboard ended before its first frame")
            seen = seen[-200:] + chunk
        return time.monotonic() - t0
    finally:
        proc.terminate()
        proc.wait(10)
        os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="updates measured per kind")
    parser.add_argument("--minutes", type=int, default=16, help="simulated minutes for the memory check")
    args = parser.parse_args()
    asyncio.run(frames(args.rounds))
    print(f"memory over {args.minutes} simulated minutes:")
    asyncio.run(memory(args.minutes))
    times = [startup_s() for _ in range(5)]
    print(
        f"startup to first frame: median {statistics.median(times):.2f} s (runs: {' '.join(f'{t:.2f}' for t in times)})"
    )


if __name__ == "__main__":
    main()
