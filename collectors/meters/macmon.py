"""Apple silicon through `macmon pipe` (vladkens/macmon, sudoless IOReport energy), integrated exactly."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime

from collectors.errors import MeterUnavailable
from collectors.meters.base import MeterInfo, MeterReading

DEFAULT_INTERVAL_MS = 200  # 5 Hz; macmon clamps anything below 100 ms to 100
INSTALL_FIX = "brew install macmon (or cargo install macmon)"
_VERSION = re.compile(r"^macmon \d+\.\d+")
_FRACTION = re.compile(r"(\.\d{6})\d+")


def _timestamp_s(text: object) -> float | None:
    """RFC 3339 (`...T20:38:15.427569+00:00`) to epoch seconds; None when absent or unreadable."""
    if not isinstance(text, str):
        return None
    try:  # Python 3.10 accepts neither a trailing Z nor more than 6 fractional digits
        return datetime.fromisoformat(_FRACTION.sub(r"\1", text.replace("Z", "+00:00"))).timestamp()
    except ValueError:
        return None


class MacmonIntegrator:
    """Turns `macmon pipe` lines into joules: each line's watts are the average over its interval."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.soc_j = 0.0  # all_power = CPU + GPU + ANE (IOReport energy model)
        self.system_j = 0.0  # sys_power = SMC system power, when the Mac reports it
        self.soc_w: float | None = None
        self.lines = 0
        self.bad_lines = 0
        self._last_stamp: float | None = None
        self._last_arrival: float | None = None

    def feed(self, line: str, arrival_s: float) -> bool:
        """Add one line; returns False for a line that is not a macmon sample (it is skipped)."""
        try:
            d = json.loads(line)
            if isinstance(d["all_power"], bool):  # JSON false is no number (Python's bool is an int)
                raise TypeError("all_power is not a number")
            soc_w = float(d["all_power"])
            if not (math.isfinite(soc_w) and soc_w >= 0):  # NaN would stick in the joules for good
                raise ValueError(soc_w)
        except (ValueError, KeyError, TypeError, OverflowError):
            self.bad_lines += bool(line.strip())
            return False
        stamp = _timestamp_s(d.get("timestamp"))
        # Since v0.8 intervals are contiguous and each timestamp is taken at an interval's end, so
        # the timestamp gap is the interval itself; the nominal value only covers the first line.
        dt = self.interval_s
        if stamp is not None and self._last_stamp is not None:
            gap = stamp - self._last_stamp
            dt = gap if 0 < gap < 10 * self.interval_s else dt
        elif self._last_arrival is not None and stamp is None:
            gap = arrival_s - self._last_arrival
            dt = gap if 0 < gap < 10 * self.interval_s else dt
        soc_j = self.soc_j + soc_w * dt
        if not math.isfinite(soc_j):  # watts near the float limit: the joules would stick at inf
            self.bad_lines += 1
            return False
        self._last_stamp, self._last_arrival = stamp, arrival_s
        self.soc_w, self.soc_j = soc_w, soc_j
        sys_w = d.get("sys_power")
        if isinstance(sys_w, (int, float)) and not isinstance(sys_w, bool) and 0 < sys_w < math.inf:
            # 0.0 means the SMC key was unreadable
            system_j = self.system_j + float(sys_w) * dt
            self.system_j = system_j if math.isfinite(system_j) else self.system_j
        self.lines += 1
        return True


def check_binary(exe: str, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> str:
    """Return the resolved path of a real macmon, or say which wrong program sits on PATH."""
    path = shutil.which(exe)
    if path is None:
        raise MeterUnavailable(f"macmon is not installed ('{exe}' not found on PATH)", INSTALL_FIX)
    try:
        done = run([path, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MeterUnavailable(f"cannot run {path}: {exc}", INSTALL_FIX) from exc
    if done.returncode != 0 or not _VERSION.match(done.stdout.strip()):
        pypi = done.returncode == 2  # argparse's exit code: PyPI 'macmon' has no --version and no pipe
        what = (
            "is the unrelated PyPI package 'macmon' (a web dashboard with no power data)"
            if pypi
            else f"does not look like vladkens/macmon (`--version` said {done.stdout.strip()[:60]!r})"
        )
        raise MeterUnavailable(
            f"'{path}' {what}",
            f"pip uninstall macmon, then {INSTALL_FIX}; or pass the Homebrew binary /opt/homebrew/bin/macmon",
        )
    return path


class MacmonMeter:
    """SoC energy (`all_power`) from a `macmon pipe -i MS` child; `sys_power` kept as `system_energy_j`."""

    def __init__(
        self,
        exe: str = "macmon",
        *,
        interval_ms: int = DEFAULT_INTERVAL_MS,
        lines: Iterable[str] | None = None,
        platform: str = sys.platform,
        first_line_timeout_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        interval_ms = max(100, int(interval_ms))
        self._clock, self._lock = clock, threading.Lock()
        self._integ = MacmonIntegrator(interval_ms / 1000.0)
        self._proc: subprocess.Popen[str] | None = None
        self._reading: MeterReading | None = None
        self._first = threading.Event()
        self._ended = False
        source = lines
        if source is None:
            if platform != "darwin":
                raise MeterUnavailable(
                    "macmon reads Apple silicon power, and this is not macOS",
                    "on Linux use --meter nvml, amd, rapl or estimate",
                )
            path = check_binary(exe)
            self._proc = subprocess.Popen(
                [path, "pipe", "-i", str(interval_ms)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
            assert self._proc.stdout is not None
            source = self._proc.stdout
        self._thread = threading.Thread(target=self._pump, args=(source,), name="macmon", daemon=True)
        self._thread.start()
        if not self._first.wait(first_line_timeout_s) or self._reading is None:
            problem = self._exit_problem() or f"macmon printed no sample within {first_line_timeout_s:g} s"
            self.close()
            raise MeterUnavailable(problem, INSTALL_FIX + "; try `macmon pipe -s 1` by hand")
        self.info = MeterInfo(
            name="macmon",
            devices=("Apple silicon SoC",),
            boundary="SoC (CPU+GPU+ANE)",
            method="counter",
            update_period_s=interval_ms / 1000.0,
            detail=f"macmon pipe -i {interval_ms}: IOReport energy over each interval",
            notes=(
                "Apple's per-block energy model, not a power sensor; DRAM not included",
                "sys_power (SMC system power) is kept separately as system_energy_j",
            ),
        )

    def _pump(self, source: Iterable[str]) -> None:
        try:
            for line in source:
                t_s = self._clock()
                with self._lock:
                    if self._integ.feed(line, t_s):
                        self._reading = MeterReading(t_s, self._integ.soc_j, self._integ.soc_w)
                        self._first.set()
        except (OSError, ValueError):
            pass  # the pipe closed under us during close()
        finally:
            self._ended = True
            self._first.set()

    def _exit_problem(self) -> str | None:
        proc = self._proc
        if proc is not None and self._ended:
            try:  # stdout closed: give the child a moment to be reaped so its exit code is known
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if proc is None or proc.poll() is None:
            return "macmon stopped sending samples" if self._ended else None
        err = (proc.stderr.read() if proc.stderr else "").strip().splitlines()
        tail = err[-1] if err else ""
        if proc.returncode == 2 and "usage" in " ".join(err).lower():
            return f"macmon rejected `pipe` (exit 2: {tail}); it is probably the PyPI 'macmon'"
        return f"macmon exited with code {proc.returncode}: {tail}"

    @property
    def system_energy_j(self) -> float:
        """Joules of SMC system power (`sys_power`) since opening; 0 where the Mac does not report it."""
        with self._lock:
            return self._integ.system_j

    def read(self) -> MeterReading:
        with self._lock:
            reading = self._reading
        if self._ended:
            raise MeterUnavailable(self._exit_problem() or "macmon stopped", INSTALL_FIX)
        assert reading is not None  # the constructor waited for the first sample
        return reading

    def close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
