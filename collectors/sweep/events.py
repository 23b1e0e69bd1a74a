"""What the sweep engine yields, in order: frozen events shared by the dashboard and the headless CLI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from collectors.requests.record import RequestRecord
from collectors.sweep.arms import ArmSpec
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.point import Flag, SweepPoint
from collectors.sweep.records import Summary


@dataclass(frozen=True, slots=True)
class SweepStarted:
    run_dir: Path
    plan: SweepPlan
    schedule: tuple[PointKey, ...]
    arms: tuple[ArmSpec, ...]


@dataclass(frozen=True, slots=True)
class IdleMeasured:
    power_w: float | None  # None: no baseline (no meter, or `flag` says why)
    duration_s: float
    flag: Flag | None = None


@dataclass(frozen=True, slots=True)
class PointProgressed:
    index: int
    key: PointKey
    state: str  # "starting server", "warm-up", "running"


@dataclass(frozen=True, slots=True)
class PointDone:
    index: int
    key: PointKey
    row: SweepPoint
    records: tuple[RequestRecord, ...] = ()  # the point's requests, for a live requests table


@dataclass(frozen=True, slots=True)
class PointsAdded:
    """Points planned after the grid: the batch where the ratio leaves the break-even band (`refine`)."""

    first_index: int
    keys: tuple[PointKey, ...]


@dataclass(frozen=True, slots=True)
class SweepEnded:
    run_dir: Path
    summary: Summary
    cancelled: bool
    error: str | None = None


SweepEvent = SweepStarted | IdleMeasured | PointProgressed | PointDone | PointsAdded | SweepEnded
