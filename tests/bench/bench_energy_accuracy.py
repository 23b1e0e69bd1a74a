"""How exact a point's energy, and so its mJ/token, is: the real meter path against the simulator's counter.

Run by hand (not collected by pytest): `python tests/bench/bench_energy_accuracy.py [seconds per period]`.
The simulator runs a changing load (batches of 1-8 requests of 16-128 tokens, one after another),
so power moves within a window. For each meter period P (the DCGM page's `?period=`), spectop's
real path reads the simulated dcgm-exporter page: `open_meter("dcgm=URL?period=P")`, a `Sampler`
at 1/P Hz, and `Sampler.energy_between`. Meanwhile the bench reads the accelerator's exact
energy counter every 20 ms. Every pair of exact readings k periods apart is a window; its error
is `energy_between` / exact - 1, which is the point's mJ/token error (its tokens are counted
exactly from the streams, so they cancel). The ends are interpolated between meter samples, as for
a window without marks (the sweep marks its windows, which makes the ends exact on a counter);
the error is what power changing within one period at each end does. It prints, per period and
window length, the median and p95 |error| and the share of windows `short_window` flags, and
checks the flag: every window under 10 periods flagged, none of 10 or more.
"""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time

import numpy as np

from collectors.requests.client import RequestSpec, stream_request
from collectors.http import STREAM_TIMEOUT, make_client
from collectors.meters.sampler import SHORT_WINDOW_PERIODS, Sampler
from collectors.meters.specs import open_meter
from collectors.simulator import Simulator

Row = tuple[int, float, bool, float]  # periods asked, relative error, flagged short, window s
PERIODS_S = (0.1, 0.25, 0.5)
WINDOW_PERIODS = (2, 5, 9, 10, 20, 50)


def load(url: str, stop: threading.Event) -> None:
    """Batches of random size and length, back to back, until `stop`."""
    rng = random.Random(0)

    async def run() -> None:
        async with make_client(None, STREAM_TIMEOUT) as client:
            while not stop.is_set():
                specs = [RequestSpec(max_tokens=rng.randint(16, 128)) for _ in range(rng.randint(1, 8))]
                await asyncio.gather(*(stream_request(client, url, s) for s in specs))
                await asyncio.sleep(rng.uniform(0, 0.3))  # idle gaps: power steps down and up

    asyncio.run(run())


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    with Simulator(speedup=4.0, noise=0.02) as sim:
        stop = threading.Event()
        loader = threading.Thread(target=load, args=(sim.plain_url, stop), daemon=True)
        loader.start()
        try:
            rows = [(period_s, measure_period(sim, period_s, seconds)) for period_s in PERIODS_S]
        finally:
            stop.set()
            loader.join(30)
    wrong_flags = 0
    for ends, which in (("interpolated between samples (no marks)", 0), ("marked, as the sweep's points", 1)):
        print(f"window ends {ends}: |error| of window energy (= of mJ/token) against the exact counter")
        wrong_flags += table([(p, r[which]) for p, r in rows])
    print(
        f"windows flagged wrongly (short under {SHORT_WINDOW_PERIODS} periods, not short from it): {wrong_flags}"
    )


def table(rows: list[tuple[float, list[Row]]]) -> int:
    """Print one table; the number of windows whose short flag is wrong."""
    print(
        f"{'period s':>8s} {'periods':>7s} {'windows':>7s} {'median %':>9s} {'p95 %':>7s} {'max %':>7s} {'flagged':>8s}"
    )
    wrong_flags = 0
    for period_s, results in rows:
        for k in WINDOW_PERIODS:
            errs = [abs(e) for kk, e, _, _ in results if kk == k]
            flags = [f for kk, _, f, _ in results if kk == k]
            if not errs:
                continue
            # a window is at least k periods long, a little more where the exact reads or marks fall
            wrong_flags += sum(
                f != (w < SHORT_WINDOW_PERIODS * period_s) for kk, _, f, w in results if kk == k
            )
            print(
                f"{period_s:8.2f} {k:7d} {len(errs):7d} {100 * np.median(errs):9.3f} "
                f"{100 * np.percentile(errs, 95):7.3f} {100 * max(errs):7.3f} {np.mean(flags):8.0%}"
            )
    return wrong_flags


def measure_period(sim: Simulator, period_s: float, seconds: float) -> tuple[list[Row], list[Row]]:
    """(window periods, relative error, flagged short) for every window of every length."""
    meter = open_meter(f"dcgm={sim.meter_url}/metrics?period={period_s:g}")
    assert meter is not None
    exact: list[tuple[float, float]] = []
    marks: list[float] = []  # the marks' times
    sampler = Sampler(meter, rate_hz=1 / period_s).start()
    try:
        time.sleep(2 * period_s)
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            reading = sim.accelerator.read()
            exact.append((reading.t_s, reading.energy_mj / 1000))
            if len(exact) % 5 == 0:  # a mark, as the sweep takes one at each end of a point
                mark = sampler.mark()  # a throttled meter answers with its last reading: its own time
                if mark is not None and (not marks or mark.t_s > marks[-1]):
                    marks.append(mark.t_s)
            time.sleep(0.02)
        time.sleep(2 * period_s)  # a sample after the last window's end
    finally:
        sampler.stop()
        meter.close()
    ts = np.array([t for t, _ in exact])
    out = []
    for k in WINDOW_PERIODS:
        for t0, e0 in exact:
            j = int(np.searchsorted(ts, t0 + k * period_s))
            if j >= len(exact):
                break
            t1, e1 = exact[j]
            window = sampler.energy_between(t0, t1)
            if window.covered and e1 > e0:
                out.append((k, window.energy_j / (e1 - e0) - 1, window.short_window, t1 - t0))
    return out, _marked(sampler, marks, exact, period_s)


def _marked(
    sampler: Sampler, marks: list[float], exact: list[tuple[float, float]], period_s: float
) -> list[Row]:
    """The same for windows whose ends are marks (the sweep's points); the exact energy at a mark's
    time is interpolated between the exact readings 20 ms apart around it."""
    ts, energy = np.array([t for t, _ in exact]), np.array([e for _, e in exact])
    marks = [t for t in marks if ts[0] <= t <= ts[-1]]
    out = []
    for k in WINDOW_PERIODS:
        for t0 in marks:
            j = int(np.searchsorted(marks, t0 + k * period_s))
            if j < len(marks):
                t1 = marks[j]
                e0, e1 = np.interp([t0, t1], ts, energy)
                window = sampler.energy_between(t0, t1)
                out.append((k, window.energy_j / (e1 - e0) - 1, window.short_window, t1 - t0))
    return out


if __name__ == "__main__":
    main()
