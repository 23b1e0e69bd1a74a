"""Where a sweep's wall time goes: the default protocol against the simulator, its measured windows
against everything around them.

Run by hand (not collected by pytest): `python tests/bench/bench_sweep_efficiency.py [speedup]`.
The default plan (collectors/docs/sweep.md: batches 1-16, two passes, plain before and after, 5 s idle
baseline) runs against the simulator (token rates and power times `speedup`, 4 by default) read
through the DCGM meter at 10 Hz. From the sweep's own events it splits the wall time into the
measured windows (first send to last token), the idle baseline, the warm-ups, and the rest (server
checks, the meter's wait for a sample past each window's end, writing points); it prints each in
seconds and as a share of the wall time, and the ratio wall time ÷ measured windows. At a higher
speedup the windows shrink and fixed costs weigh more.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.events import IdleMeasured, PointDone, PointProgressed, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep


def main() -> None:
    speedup = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    plan = SweepPlan()
    spent = {"measured windows": 0.0, "idle baseline": 0.0, "warm-ups": 0.0}
    points = 0
    with Simulator(speedup=speedup) as sim, tempfile.TemporaryDirectory() as results:
        meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
        with Sampler(meter) as sampler:
            t_start = last = time.monotonic()
            for event in run_sweep(
                plan, make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url), sampler, Path(results)
            ):
                now = time.monotonic()
                if isinstance(event, IdleMeasured):
                    spent["idle baseline"] += event.duration_s
                elif isinstance(event, PointProgressed) and event.state == "running":
                    spent["warm-ups"] += now - last
                elif isinstance(event, PointDone):
                    spent["measured windows"] += event.row.window.window_s
                    points += 1
                elif isinstance(event, SweepEnded) and event.error:
                    raise SystemExit(f"the sweep failed: {event.error}")
                last = now
            wall_s = time.monotonic() - t_start
        meter.close()
    spent["the rest"] = wall_s - sum(spent.values())
    print(f"default sweep, {points} points, simulator at speedup {speedup:g}: {wall_s:.1f} s wall")
    for name, seconds in spent.items():
        print(f"  {name:18s} {seconds:7.1f} s  {seconds / wall_s:6.1%}")
    print(f"wall time / measured windows: {wall_s / spent['measured windows']:.2f}")


if __name__ == "__main__":
    main()
