"""What recomputing per-request energy costs the dashboard: one settle of the attribution book.

Run by hand (not collected by pytest): `python tests/bench/bench_attribution.py [rounds]`.
A full meter history (3000 readings at 10 Hz) and three shapes of traffic: a sweep point's 64
concurrent requests arriving as one batch, the same arriving with a settle after each (the worst
order), and 200 requests chained by overlaps into one group over 290 s, one settle per arrival;
each without polls and with 300 polls that counted the server's tokens (traffic spectop did not
send takes its share, collectors/energy/unseen.py). It prints the median milliseconds per settle.
"""

from __future__ import annotations

import statistics
import sys
import time

from collectors.energy.attribution import AttributionBook
from collectors.meters import MeterReading
from collectors.servers.snapshot import ServerSnapshot
from tests.support.records import record

METER = [MeterReading(i / 10, 4.0 * i, 40.0) for i in range(3001)]
POLLS = [ServerSnapshot("http://s", "llama.cpp", 0.0, "ok")] + [
    ServerSnapshot("http://s", "llama.cpp", float(t), "ok", window_s=1.0, window_tokens=400)
    for t in range(1, 301)
]


def settle_ms(n: int, spread_s: float, duration_s: float, each: bool, polls: bool) -> float:
    records = [record(f"r{i}", i * spread_s / n, i * spread_s / n + duration_s, 128, 2) for i in range(n)]
    book = AttributionBook()
    settles = 0
    t0 = time.perf_counter()
    for r in records:
        book.add(r)
        if each:
            book.settle(METER, POLLS if polls else ())
            settles += 1
    if not each:
        book.settle(METER, POLLS if polls else ())
        settles = 1
    return 1000 * (time.perf_counter() - t0) / settles


def main(rounds: int) -> None:
    shapes = {
        "64 concurrent, one batch": (64, 0.5, 10.0, False),
        "64 concurrent, settle each": (64, 0.5, 10.0, True),
        "200 chained, settle each": (200, 280.0, 10.0, True),
    }
    for name, shape in shapes.items():
        for polls in (False, True):
            label = f"{name}{', counted' if polls else ''}"
            ms = statistics.median(settle_ms(*shape, polls) for _ in range(rounds))
            print(f"{label:37s} {ms:7.2f} ms per settle")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
