"""Putting a long recording into the energy ledger without the dashboard: `spectop replay FILE...
--ledger PATH --no-ui`'s CPU and memory.

Run by hand (not collected by pytest): `python tests/bench/bench_replay_ledger.py [--days 2]`.
The recording is tests/support/ledger_stream.py's (a poll every 10 s, meter readings every 5 s),
one file a day as if spectop were restarted daily. Printed: the files' size, then for the import
(reading the files and writing the ledger, in this process): CPU seconds, wall seconds, the
process's peak resident memory, and the windows added; then the same files again (all refused).
2 days on the 2-core dev box under load: 5.8 s CPU, 92 MiB; again: 4.8 s CPU, 0 windows added.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import resource
import tempfile
import time
from pathlib import Path

from tests.support.ledger_stream import Meter, record_spectop
from tui.cli import main

DAY_S = 86_400


def timed_import(files: list[Path], ledger: Path) -> str:
    out = io.StringIO()
    cpu_s, wall_s = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(out):
        assert main(["replay", *map(str, files), "--ledger", str(ledger), "--no-ui"]) == 0
    cpu_s, wall_s = time.process_time() - cpu_s, time.perf_counter() - wall_s
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # this process's so far
    added = sum(
        int(line.split(" added")[0].rsplit(" ", 1)[1].replace(",", ""))
        for line in out.getvalue().splitlines()
        if " added" in line
    )
    return f"{cpu_s:.1f} s CPU, {wall_s:.1f} s wall, peak RSS {peak_mb:.0f} MiB, {added:,} windows added"


def run(days: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        meter, wall0_s = Meter(), time.time() - days * DAY_S - 600
        files = [
            record_spectop(Path(folder) / f"day{d}.jsonl", meter, d * DAY_S, (d + 1) * DAY_S, wall0_s)
            for d in range(days)
        ]
        size_mb = sum(f.stat().st_size for f in files) / 2**20
        print(f"{days} day(s) recorded: {len(files)} files, {size_mb:.1f} MiB")
        ledger = Path(folder) / "ledger.sqlite"
        print(f"import:       {timed_import(files, ledger)}")
        print(f"import again: {timed_import(files, ledger)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=2)
    run(parser.parse_args().days)
