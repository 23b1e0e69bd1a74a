"""What the energy panel and the exporter show of a tuned schedule (collectors/tune/live.py makes it).

Its own module, with no imports, so the live verdict and the exporter's series can name it without
loading the tracker (which reads the energy ledger's windows).
"""

from __future__ import annotations

from dataclasses import dataclass

READ_BACK = "read back"  # the server says it runs the schedule's K now
NOT_READ_BACK = "not read back"  # the server does not say what it runs: as tuned
NOT_IN_EFFECT = "not in effect"  # the server says it runs another K


@dataclass(frozen=True, slots=True)
class ScheduleView:
    """What the panel and the exporter show of the schedule in effect."""

    setting: str  # the schedule in short: "K 4 at 1-3, off from 4"
    batch: int | None  # the current batch level
    k_scheduled: int | None  # the schedule's K there
    k_running: int | None  # what the server says it runs now; None: not read back
    read_back: str  # READ_BACK, NOT_READ_BACK or NOT_IN_EFFECT: a label value, so one of three
    saved_j: float  # against always-draft, this session
    always_j: float  # what always-draft would have spent over the same windows
    windows: int  # poll windows counted
    windows_off: int = 0  # windows the server ran another K than the schedule's: not counted

    @property
    def saved_fraction(self) -> float | None:
        return self.saved_j / self.always_j if self.always_j > 0 else None
