"""How soon spectop shows something: the first frame after `spectop --server URL`, and the demo's
first tok/s.

Run by hand: `python tests/bench/bench_startup.py [--runs 5]`. Each run execs spectop in a 160x45
pseudo-terminal and reads what it writes there, from the exec on:
- first frame: until the panels' titles reach the terminal ("energy per token"), with the default
  meter, watching a port where nothing listens (what the first frame shows cannot wait on a server);
- the demo's first tok/s: `spectop demo` (the simulator, its meter and a load, all started by it)
  until the throughput panel shows a figure ("12.3 tok/s").
Medians of the runs, each run's figure beside it.

Each case starts once uncounted first, with bytecode writing on, as a user's install has it (pip
compiles an install's modules; an editable install's are compiled by its first start). With
PYTHONDONTWRITEBYTECODE set, as on some CI machines, every start would compile spectop's own
sources again, about 0.3-0.4 s more on a 2-core machine: the environment's cost, not spectop's.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import statistics
import struct
import subprocess
import sys
import termios
import time

from collectors.launch.process import free_port

COLS, ROWS = 160, 45
TIMEOUT_S = 60.0
FIRST_FRAME = re.compile(rb"energy per token")
FIRST_TOK_S = re.compile(rb"\d+\.\d tok/s")


def seconds_until(argv: list[str], seen_text: re.Pattern[bytes]) -> float:
    """Seconds from exec until `seen_text` is written to the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        while not seen_text.search(seen):
            if time.monotonic() - t0 > TIMEOUT_S:
                raise RuntimeError(f"{seen_text.pattern!r} not shown within {TIMEOUT_S:g} s")
            chunk = os.read(master, 65536)
            if not chunk:
                raise RuntimeError("spectop ended before showing it")
            seen = seen[-400:] + chunk  # a match may straddle two reads
        return time.monotonic() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    spectop = [sys.executable, "-m", "tui"]
    cases = {
        "first frame, `spectop --server URL` (default meter)": (
            lambda: [*spectop, "--server", f"http://127.0.0.1:{free_port()}"],
            FIRST_FRAME,
        ),
        "first tok/s, `spectop demo`": (lambda: [*spectop, "demo"], FIRST_TOK_S),
    }
    for name, (argv, seen_text) in cases.items():
        seconds_until(argv(), seen_text)  # uncounted: writes the bytecode a user's first start would
        runs = [seconds_until(argv(), seen_text) for _ in range(args.runs)]
        print(f"{name}: median {statistics.median(runs):.2f} s (runs: {' '.join(f'{t:.2f}' for t in runs)})")


if __name__ == "__main__":
    main()
