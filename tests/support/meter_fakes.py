"""Small shared fakes for the meter tests."""

from __future__ import annotations

import sys
from pathlib import Path


class FakeClock:
    def __init__(self, t_s: float = 100.0) -> None:
        self.t_s = t_s

    def __call__(self) -> float:
        return self.t_s

    def advance(self, dt_s: float) -> None:
        self.t_s += dt_s


def this_machine_has_a_meter() -> bool:
    """True where a real source exists, so tests about a sensor-less machine must skip."""
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return True
    except Exception:
        pass
    return sys.platform == "darwin" or Path("/sys/class/powercap").exists() or Path("/sys/class/drm").exists()
