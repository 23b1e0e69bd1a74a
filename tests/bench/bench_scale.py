"""Scale: what watching costs as the traffic grows to 256 busy slots and 10,000 requests a minute.

Run by hand (not collected by pytest): `python tests/bench/bench_scale.py [--seconds 30] [--rates 1000,3000,10000]`.

Real traffic reaches spectop as polls (busy slots, counters) and, with `--server-log` or `--proxy`,
as one request row per request. So per simulated second, at each rate R requests a minute:
10 meter readings, one poll in which 256 busy slots' counts move, and R/60 finished request
records (a captured stream moved in time, so a second's requests overlap the next's), all
handed to the app the way the log reader and the proxy hand them (`add_records`). Printed: the UI
thread's CPU per simulated second (handlers plus the repaint, `time.thread_time`), median and p90,
and the headless exporter's CPU per simulated second for the same polls (it takes no request rows),
scraped every 5 s. The ratio between rates says how the cost grows.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time

from prometheus_client import CollectorRegistry, generate_latest

from collectors.export.exporter import SpectopExporter
from tests.bench.bench_dashboard_refresh import T0_S, Timeline
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings

COLS, ROWS = 160, 45
SLOTS = 256


def slots_at(t: int) -> tuple[tuple[int, int], ...]:
    return tuple((slot, 20 * t + slot) for slot in range(SLOTS))


def records_at(t: int, per_s: int, first_id: int) -> list:
    """`per_s` requests finishing in second `t`, spread over it: the captured stream, moved in time."""
    base = synthetic.record("draft-simple", "r", T0_S, "proxy")
    out = []
    for i in range(per_s):
        end_s = T0_S + t + i / max(per_s, 1)
        shift = end_s - base.t_done_s
        out.append(
            dataclasses.replace(
                base,
                request_id=f"p{first_id + i}",
                t_send_s=base.t_send_s + shift,
                t_done_s=end_s,
                events=tuple(dataclasses.replace(e, t_s=e.t_s + shift) for e in base.events),
            )
        )
    return out


def percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values), values[int(0.9 * (len(values) - 1))]


async def dashboard_costs(rate_per_min: int, seconds: int) -> list[float]:
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    timeline, per_s, next_id, costs = Timeline(), rate_per_min // 60, 0, []
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        await pilot.press("2")  # the requests tab, where the rows land
        for t in range(seconds):
            t0 = time.thread_time()
            app.on_meter_read(messages.MeterRead(timeline.readings(10)))
            app.on_server_polled(messages.ServerPolled(timeline.poll(slots_at(t))))
            app.add_records(records_at(t, per_s, next_id))
            next_id += per_s
            await pilot.pause()
            costs.append(1000 * (time.thread_time() - t0))
    return costs[5:]  # the first seconds fill the history


def exporter_costs(seconds: int) -> list[float]:
    exporter = SpectopExporter(None, FakeSampler(synthetic.METER))
    registry = CollectorRegistry()
    registry.register(exporter)
    timeline, costs = Timeline(), []
    for t in range(seconds):
        t0 = time.thread_time()
        exporter.update(timeline.poll(slots_at(t)))
        if t % 5 == 0:
            generate_latest(registry)
        costs.append(1000 * (time.thread_time() - t0))
    return costs[5:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--rates", default="0,1000,3000,10000", help="requests a minute, comma separated")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    print(f"{SLOTS} busy slots, {args.seconds} simulated seconds per rate, {COLS}x{ROWS}")
    base = None
    for rate in rates:
        median, p90 = percentiles(asyncio.run(dashboard_costs(rate, args.seconds)))
        base = base or median
        print(
            f"  dashboard at {rate:>6,} requests/min: UI thread {median:7.1f} ms per second "
            f"(p90 {p90:7.1f}), {median / base:5.1f}x the first rate"
        )
    median, p90 = percentiles(exporter_costs(args.seconds))
    print(f"  exporter (polls only, scraped every 5 s): {median:5.2f} ms per second (p90 {p90:5.2f})")


if __name__ == "__main__":
    main()
