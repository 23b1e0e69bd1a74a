"""A background thread that reads one meter at a fixed rate, and honest window energy from its samples.

Pitfalls handled: a reading that is not a finite number is a failed read, never stored (one NaN
would poison every later window); a power that is not finite or negative is dropped; a decrease is
held level and marked on the stored reading (`fault`), beside any fault the meter itself reported,
so every window it falls in says so (`WindowEnergy.problems`, collectors/meters/plausible.py).
"""

from __future__ import annotations

import asyncio
import bisect
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable

from collectors.meters import plausible
from collectors.meters.base import Meter, MeterInfo, MeterReading
from collectors.meters.window import (
    MARK_NEAR_S,
    SHORT_WINDOW_PERIODS,
    WindowEnergy,
    energy_at,
    read_near,
)

MAX_RATE_HZ = 10.0  # a power-only sensor is integrated at its own update period, at most this often
COUNTER_RATE_HZ = 1.0  # an energy counter needs no integration: read where windows start and end
# Marked at window ends: a counter, and the CPU-load estimate, whose running joules integrate its
# own load over whatever interval lies between two reads.
MARKED_METHODS = ("counter", "estimate")
# While a watcher's polls mark such a meter about once a period, its schedule only covers a
# stall of the marks: the thread wakes every this many periods (its wakeup, once a second, cost
# the export more than its meter reads).
MARKED_WAKE_PERIODS = 5


def default_rate_hz(info: MeterInfo) -> float:
    """How often the schedule reads a meter unless told. An energy counter (NVML's, RAPL, DCGM's or
    node_exporter's joules) is exact at any read: its windows get their ends from `Sampler.mark` (at
    each poll, a sweep point's first send and last token), and the schedule only feeds the power
    history, once a second like the poll. A power-only meter is integrated at its own update period
    (at most 10 Hz); the CPU-load estimate stays at 10 Hz for a sweep (its model is cubic in the
    load; a watcher reads it as `watching_rate_hz` says)."""
    if info.method == "counter":
        return COUNTER_RATE_HZ
    sensor_hz = 1.0 / info.update_period_s if info.update_period_s > 0 else MAX_RATE_HZ
    return min(MAX_RATE_HZ, max(COUNTER_RATE_HZ, sensor_hz))


def watching_rate_hz(info: MeterInfo) -> float:
    """How often a watcher (the dashboard, `export`) reads a meter: as `default_rate_hz`, but the
    CPU-load estimate once a second, marked at each poll. /proc/stat moves in 10 ms ticks, so a
    tenth of a second holds a few ticks per CPU; the power history is drawn a point a second."""
    return COUNTER_RATE_HZ if info.method == "estimate" else default_rate_hz(info)


class Sampler:
    """Reads `meter` every `1/rate_hz` s on its own thread (by default as often as its kind needs:
    `default_rate_hz`); keeps the last `max_samples` readings.

    Readings are made monotonic here too (a meter bug must not produce negative window energy), and
    a reading whose time did not advance (a throttled remote meter) is not stored twice. The sampler
    does not own the meter: close it yourself after `stop()`.
    """

    def __init__(
        self,
        meter: Meter,
        rate_hz: float | None = None,
        max_samples: int = 36_000,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        rate_hz = default_rate_hz(meter.info) if rate_hz is None else rate_hz
        if not rate_hz > 0:
            raise ValueError("rate_hz must be positive")
        self.meter, self.period_s, self._clock = meter, 1.0 / rate_hz, clock
        self._samples: deque[MeterReading] = deque(maxlen=max(2, max_samples))
        self._lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._new_sample = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._offset_j = 0.0
        self.ticks = 0
        self._marked_s = -math.inf  # when `mark` last read the meter
        self.failed_ticks = 0
        self.decreases = 0  # readings that went backwards and were held level
        self.last_error: str | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> Sampler:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name=f"sampler-{self.meter.info.name}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        next_t = self._clock()
        while not self._stop.is_set():
            # a mark (a poll's) read the meter within half a period: the schedule has nothing to add
            if self._clock() - self._marked_s >= self.period_s / 2:
                self.tick()
            # Schedule from the previous target, not from now, so the rate does not drift; after a
            # stall (slow read, suspended machine) skip the missed ticks instead of bursting.
            next_t += self.period_s
            now = self._clock()
            if next_t < now:
                next_t = now + self.period_s - (now - next_t) % self.period_s
            if now - self._marked_s < 2 * self.period_s and self.reads_on_marks:
                next_t = max(next_t, self._marked_s + MARKED_WAKE_PERIODS * self.period_s)
            self._stop.wait(next_t - now)

    @property
    def reads_on_marks(self) -> bool:
        """A counter (or the estimate's running joules) read less often than it changes: windows
        need `mark` at their ends."""
        info = self.meter.info
        return info.method in MARKED_METHODS and self.period_s > info.update_period_s

    @property
    def reads_at_once(self) -> bool:
        """The meter reads local files (sysfs, /proc) in microseconds: a mark needs no thread."""
        return bool(getattr(self.meter, "reads_at_once", False))

    def mark(self) -> MeterReading | None:
        """Read the meter now, outside the schedule: a window that starts or ends at a mark has an
        exact boundary on a counter meter instead of one interpolated between ticks."""
        before = self.latest()
        reading = self.tick()
        if reading is not None and reading is not before:  # a throttled meter's old value is no read
            self._marked_s = self._clock()
        return reading

    def tick(self) -> MeterReading | None:
        """Take one reading now (the thread calls this; tests may too). None when the read failed."""
        try:
            with self._read_lock:  # meters keep running totals; one reader at a time
                r = self.meter.read()
            if not (math.isfinite(r.t_s) and math.isfinite(r.energy_j)):
                raise ValueError(f"the meter returned {r.energy_j} J at t={r.t_s}: not a number")
        except Exception as exc:  # the thread must survive anything a meter does; report it instead
            with self._lock:
                self.ticks += 1
                self.failed_ticks += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        power_w = r.power_w if r.power_w is not None and math.isfinite(r.power_w) and r.power_w >= 0 else None
        with self._lock:
            self.ticks += 1
            last = self._samples[-1] if self._samples else None
            if last is not None and r.t_s <= last.t_s:
                return last
            energy_j, fault = r.energy_j + self._offset_j, r.fault
            if last is not None and energy_j < last.energy_j:
                self.decreases += 1
                fault = f"held level at {last.energy_j:g} J, read {energy_j:g} J" + (
                    f"; {fault}" if fault else ""
                )
                self._offset_j += last.energy_j - energy_j
                energy_j = last.energy_j
            stored = MeterReading(r.t_s, energy_j, power_w, fault)
            self._samples.append(stored)
            self._new_sample.notify_all()
            return stored

    # -- reads -----------------------------------------------------------------------------------
    def latest(self) -> MeterReading | None:
        with self._lock:
            return self._samples[-1] if self._samples else None

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        """Stored readings, oldest first; only those after `since_t_s` when given."""
        with self._lock:
            samples = list(self._samples)
        if since_t_s is None:
            return samples
        return samples[bisect.bisect_right([s.t_s for s in samples], since_t_s) :]

    def power_w_now(self) -> float | None:
        """The meter's own latest power, else the slope of the last two samples."""
        with self._lock:
            if not self._samples:
                return None
            last = self._samples[-1]
            if last.power_w is not None:
                return last.power_w
            if len(self._samples) < 2:
                return None
            prev = self._samples[-2]
        return (last.energy_j - prev.energy_j) / (last.t_s - prev.t_s)

    def wait_for(self, t_s: float, timeout_s: float) -> bool:
        """Block until a sample at or after `t_s` exists; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._new_sample:
            while not (self._samples and self._samples[-1].t_s >= t_s):
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._new_sample.wait(min(left, 0.5))
        return True

    def energy_between(self, t0_s: float, t1_s: float, wait_s: float = 0.0) -> WindowEnergy:
        """Energy over `[t0_s, t1_s]`, interpolating linearly at both ends and never extrapolating.

        With `wait_s > 0`, first wait up to that long for a sample at or after `t1_s`, so a window
        that ends now is complete instead of losing its last partial interval.
        """
        if t1_s < t0_s:
            raise ValueError("t1_s must not be before t0_s")
        if wait_s > 0:
            self._read_past(t1_s, time.monotonic() + wait_s)
        with self._lock:
            samples = list(self._samples)
        info = self.meter.info
        ts = [s.t_s for s in samples]
        # ends read within a sensor period (marks) are as exact as the sensor; else the schedule's
        # spacing blurs them too
        near_s = max(info.update_period_s, MARK_NEAR_S)
        marked = read_near(ts, t0_s, near_s) and read_near(ts, t1_s, near_s)
        effective_s = info.update_period_s if marked else max(info.update_period_s, self.period_s)
        short = (t1_s - t0_s) < SHORT_WINDOW_PERIODS * effective_s * (
            1 - 1e-9
        )  # a window of exactly 10 periods is not short
        covered = bool(samples) and ts[0] <= t0_s and ts[-1] >= t1_s
        a, b = (max(t0_s, ts[0]), min(t1_s, ts[-1])) if samples else (t0_s, t0_s)
        energy_j = energy_at(samples, ts, b) - energy_at(samples, ts, a) if b > a else 0.0
        n = bisect.bisect_right(ts, t1_s) - bisect.bisect_left(ts, t0_s)
        # the readings that bracket the window too: a value standing still across an end counts
        around = samples[max(0, bisect.bisect_left(ts, t0_s) - 1) : bisect.bisect_right(ts, t1_s) + 1]
        return WindowEnergy(
            energy_j,
            t0_s,
            t1_s,
            n,
            covered,
            short,
            info.method,
            info.update_period_s,
            unchanged_s=plausible.unchanged_s(around, t0_s, t1_s, info.method == "integrated"),
            faults=tuple(
                s.fault for s in around if s.fault and s.t_s > t0_s
            ),  # a drop just past t1 bends its end
            info=info,
        )

    def _read_past(self, t_s: float, deadline_s: float) -> None:
        """Read the meter now, until a reading at or after `t_s` (passed) or `deadline_s`: a
        throttled remote meter answers a read too soon after the last with that one's value."""
        while (last := self.latest()) is None or last.t_s < t_s:
            running = self._thread is not None and self._thread.is_alive()  # not readings fed by hand
            if not running or t_s > self._clock() or time.monotonic() >= deadline_s:
                break
            if (fresh := self.mark()) is not None and fresh.t_s >= t_s:
                return
            time.sleep(0.05)
        self.wait_for(t_s, max(0.0, deadline_s - time.monotonic()))

    def energy_at(self, t_s: float) -> float | None:
        """Cumulative joules at `t_s`, interpolated; None outside the stored samples."""
        with self._lock:
            samples = list(self._samples)
        ts = [s.t_s for s in samples]
        if not samples or not ts[0] <= t_s <= ts[-1]:
            return None
        return energy_at(samples, ts, t_s)


def start_marks(samplers: Iterable[Sampler | None]) -> asyncio.Future[list[MeterReading | None]] | None:
    """Read now each meter that `reads_on_marks` (each once, however many servers share it): a
    poll's window then starts and ends on a counter reading. Off the event loop, but on it, before
    this returns, for a meter that reads local files in microseconds (`reads_at_once`): handing
    that read to a worker thread and back costs two thread wakeups, more than the read. Returns
    what to await for the rest, or None when nothing is left (no future: a poll loop's wakeup less)."""
    due = {id(s): s for s in samplers if s is not None and s.reads_on_marks}
    for sampler in [s for s in due.values() if s.reads_at_once]:
        sampler.mark()
    threaded = [s for s in due.values() if not s.reads_at_once]
    return asyncio.gather(*(asyncio.to_thread(s.mark) for s in threaded)) if threaded else None


async def mark_at_poll(samplers: Iterable[Sampler | None]) -> None:
    """`start_marks`, awaited."""
    marks = start_marks(samplers)
    if marks is not None:
        await marks
