"""A long recording: how big it gets, how long it takes to read, and what replaying it costs.

Run by hand (not collected by pytest): `python tests/bench/bench_replay.py [--hours 12] [--replay-s 20]`.

1. Writing. A session of `--hours` is recorded as the dashboard records one (`collectors/recording/writer.py`
   Recorder, on a simulated clock): per second one poll with 8 busy slots, two meter reads of 5
   readings (10 Hz), and a request record every 3 s. Printed: bytes per hour, the parts kept
   (64 MiB each, the older part replaced), how many hours the kept parts hold, and the Recorder's
   CPU per simulated hour on the caller's thread (encoding) and in all (the writer thread too).
2. Reading. The newest part is read (`read_recording`): wall time and the memory it takes.
3. Replaying. That part plays in the dashboard (`ReplayApp`, 160x45, headless) at 64x for
   `--replay-s` seconds of wall time: CPU per second of wall time and per simulated minute.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

from collectors.recording.writer import Recorder, rotated_path
from collectors.recording.reader import read_recording
from tests.bench.bench_dashboard_refresh import T0_S, Timeline
from tests.support import synthetic
from tui.replay import ReplayApp

COLS, ROWS = 160, 45
SLOTS = 8


class SimClock:
    def __init__(self) -> None:
        self.t_s = T0_S

    def __call__(self) -> float:
        return self.t_s


def write(path: Path, hours: float) -> tuple[float, float]:
    """Record `hours`; (CPU seconds on this thread, CPU seconds of the process) per simulated hour."""
    clock, timeline = SimClock(), Timeline()
    recorder = Recorder(
        path, server_url=synthetic.URL, meter=synthetic.METER, title="bench", secrets=[], clock=clock
    )
    base = synthetic.record("draft-simple", "r", T0_S, "proxy")
    thread0, process0 = time.thread_time(), time.process_time()
    for t in range(int(hours * 3600)):
        clock.t_s = T0_S + t
        recorder.meter(timeline.readings(5))
        recorder.meter(timeline.readings(5))
        recorder.poll(timeline.poll(tuple((s, 20 * t + s) for s in range(SLOTS))))
        if t % 3 == 0:
            shift = clock.t_s - base.t_done_s
            recorder.requests(
                [
                    dataclasses.replace(
                        base,
                        request_id=f"p{t}",
                        t_send_s=base.t_send_s + shift,
                        t_done_s=clock.t_s,
                        events=tuple(dataclasses.replace(e, t_s=e.t_s + shift) for e in base.events),
                    )
                ]
            )
    recorder.close()
    return (time.thread_time() - thread0) / hours, (time.process_time() - process0) / hours


async def replay_cost(path: Path, wall_s: float) -> tuple[float, float]:
    """CPU seconds per wall second, and simulated seconds played, replaying at 64x."""
    app = ReplayApp(read_recording(path), speed=64.0)
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        await pilot.pause()
        cpu0, wall0, played0 = time.process_time(), time.monotonic(), app.position_s
        while time.monotonic() - wall0 < wall_s:
            await pilot.pause(0.1)
        cpu, wall, played = time.process_time() - cpu0, time.monotonic() - wall0, app.position_s - played0
    return cpu / wall, played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=12.0)
    parser.add_argument("--replay-s", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        thread_s, process_s = write(path, args.hours)
        parts = [p for p in (rotated_path(path), path) if p.exists()]
        sizes = [p.stat().st_size for p in parts]
        oldest, newest = read_recording(parts[0]), read_recording(parts[-1])
        kept_s = (newest.t0_s + newest.duration_s) - (oldest.t0_s + oldest.entries[0].t_s)
        del oldest, newest
        per_hour = sum(sizes) / (kept_s / 3600) if kept_s else 0
        print(
            f"recording {args.hours:g} simulated hours ({SLOTS} busy slots, 10 Hz meter, a request every 3 s):"
        )
        print(f"  {per_hour / 1e6:6.1f} MB per hour; kept {len(parts)} part(s), {sum(sizes) / 1e6:.0f} MB, "
              f"{kept_s / 3600:.1f} of {args.hours:g} hours")  # fmt: skip
        print(
            f"  Recorder CPU per simulated hour: {thread_s:.1f} s encoding (the app's thread), {process_s:.1f} s in all"
        )
        tracemalloc.start()
        t0 = time.monotonic()
        recording = read_recording(path)
        read_s = time.monotonic() - t0
        peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        print(
            f"  reading the newest part ({os.path.getsize(path) / 1e6:.0f} MB, {recording.duration_s / 3600:.1f} h, "
            f"{len(recording.entries):,} entries): {read_s:.1f} s, peak {peak_mb:.0f} MB of Python heap"
        )  # fmt: skip
        del recording
        cpu_per_s, played_s = asyncio.run(replay_cost(path, args.replay_s))
        print(
            f"replaying at 64x for {args.replay_s:g} s: {100 * cpu_per_s:.0f} % of a core, "
            f"{played_s / 60:.1f} simulated minutes played ({played_s / args.replay_s:.0f}x real time)"
        )


if __name__ == "__main__":
    main()
