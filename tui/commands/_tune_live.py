"""`--schedule FILE|RESULTS` for the dashboard and the exporter: the schedule a tune wrote, read back."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collectors.tune.schedule import DraftSchedule

HELP = (
    "after spectop tune: its schedule.json (or the results folder holding it): show the setting in "
    "effect and the energy it saved against always-draft this session"
)


def add_schedule_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schedule", type=Path, metavar="FILE|RESULTS", help=HELP)


def schedule_of(args: argparse.Namespace) -> DraftSchedule | None:
    path = getattr(args, "schedule", None)
    if path is None:
        return None
    from collectors.tune.report import read_schedule  # loads only after a tune

    return read_schedule(path)[0]


def attach(servers: Sequence[Any], schedule: DraftSchedule | None) -> None:
    """Give each watched server's state its own tracker of the schedule's saving."""
    if schedule is None:
        return
    from collectors.tune.live import ScheduleTracker  # loads only after a tune

    for server in servers:
        server.state.schedule = ScheduleTracker(schedule)
