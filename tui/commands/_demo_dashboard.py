"""The demo's dashboard beside its own traffic: `spectop demo` on the simulator, and `--llama` on real servers.

The traffic stops while a sweep measures and starts again after it, so the sweep's windows hold
only the sweep's own requests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from collectors.simulator.traffic import TrafficGenerator
from tui.config import Settings


def dashboard_with_traffic(
    settings: Settings,
    meter_spec: str,
    traffic: Callable[[], TrafficGenerator],
    delay_s: float = 0.0,
    record: Path | None = None,
) -> int:
    """The dashboard beside demo traffic that starts after `delay_s`, stops while a sweep measures
    and starts again after it."""
    from tui.commands.dashboard import run_dashboard

    running: list[TrafficGenerator | None] = [None if delay_s else traffic()]
    starter = threading.Timer(delay_s, lambda: running.__setitem__(0, traffic()))
    starter.daemon = True
    if delay_s:
        starter.start()

    def on_sweep(sweeping: bool) -> None:
        starter.cancel()
        if sweeping and running[0] is not None:
            # stop off the UI thread: in-flight demo requests are abandoned, threads join quickly
            threading.Thread(target=running[0].stop, daemon=True).start()
        elif not sweeping:
            running[0] = traffic()

    try:
        return run_dashboard(settings, meter_spec, on_sweep=on_sweep, record=record)
    finally:
        starter.cancel()
        if running[0] is not None:
            running[0].stop()
