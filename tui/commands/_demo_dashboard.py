"""The demo's dashboard beside its own traffic: `spectop demo` on the simulator, and `--llama` on real servers.

Pitfalls handled: the dashboard's idle baseline is the power over polls that saw no busy slot, and
the demo's traffic never pauses once it runs, so the traffic starts when the dashboard says it
knows the baseline, not after a fixed delay: a fixed delay started before the dashboard (importing
Textual, opening the meter, the first polls) raced it, and a slow start left "idle not measured
yet" for the whole run. A meter that never gives a baseline holds the traffic `IDLE_WAIT_MAX_S` at
most. The traffic stops while a sweep measures and starts again after it, so the sweep's windows
hold only the sweep's own requests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from collectors.simulator.traffic import TrafficGenerator
from tui.config import Settings

IDLE_WAIT_MAX_S = 30.0


class DemoTraffic:
    """Starts the traffic once the idle baseline is known, stops it while a sweep runs."""

    def __init__(self, traffic: Callable[[], TrafficGenerator], wait_max_s: float = IDLE_WAIT_MAX_S) -> None:
        self._traffic = traffic
        self._lock = threading.Lock()  # the UI thread and the fallback timer both start it
        self._sweeping = False
        self.running: TrafficGenerator | None = None
        self._fallback = threading.Timer(wait_max_s, self.idle_known)
        self._fallback.daemon = True
        self._fallback.start()

    def idle_known(self, idle_w: float | None = None) -> None:
        """The dashboard knows the idle baseline (or waited long enough): the traffic may start."""
        self._fallback.cancel()
        with self._lock:
            if self.running is None and not self._sweeping:
                self.running = self._traffic()

    def sweep(self, sweeping: bool) -> None:
        """A sweep starts (the traffic stops) or ends (it starts again: the sweep measured idle)."""
        self._fallback.cancel()
        with self._lock:
            self._sweeping = sweeping
            if sweeping and self.running is not None:
                # stop off the UI thread: in-flight demo requests are abandoned, threads join quickly
                threading.Thread(target=self.running.stop, daemon=True).start()
                self.running = None
            elif not sweeping and self.running is None:
                self.running = self._traffic()

    def stop(self) -> None:
        self._fallback.cancel()
        with self._lock:
            if self.running is not None:
                self.running.stop()
                self.running = None


def dashboard_with_traffic(
    settings: Settings,
    meter_spec: str,
    traffic: Callable[[], TrafficGenerator],
    record: Path | None = None,
) -> int:
    """The dashboard beside demo traffic that starts once the dashboard has measured idle, stops
    while a sweep measures and starts again after it."""
    from tui.commands.dashboard import run_dashboard

    demo = DemoTraffic(traffic)
    try:
        return run_dashboard(
            settings, meter_spec, on_sweep=demo.sweep, record=record, on_idle=demo.idle_known
        )
    finally:
        demo.stop()
