"""A drafting schedule as a frozen record: the draft length K to run at each batch level, 0 = off.

It is what `derive.derive_schedule` reads from a finished sweep and what each engine's renderer
(collectors/servers/<name>/schedule.py) turns into that engine's setting. `k_at` answers for any
runtime batch as the engines' range forms do: a batch between two measured levels takes the level
at or below it (vLLM 0.33.0 vllm/v1/spec_decode/dynamic/utils.py:102-111 carries the previous K
forward over a gap), a batch above the last level takes the last K, and a batch below the first
level takes the first (vLLM's first range must start at 1, utils.py:65-70).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from collectors.sweep.rule import EVEN_BAND, Crossover

SCHEDULE_SCHEMA = "spectop.schedule/1"


@dataclass(frozen=True, slots=True)
class ScheduleLevel:
    """One measured batch: the K chosen there and the energies it was chosen from."""

    batch: int
    k: int  # draft tokens per step; 0 = drafting off
    arm: str  # the sweep arm whose K it is ("plain" for off)
    mj_per_token: float | None  # the chosen arm's energy per token here
    always_mj_per_token: float | None  # the always-draft arm's
    plain_mj_per_token: float | None
    # the lowest arm differed from always-draft by less than the band: always-draft's K kept
    in_band: bool = False
    # False: no trustworthy figures here, so the K is always-draft's (or off above the crossover)
    trusted: bool = True


@dataclass(frozen=True, slots=True)
class DraftSchedule:
    """A K per measured batch level, the always-draft arm it is compared with, and where it came from."""

    levels: tuple[ScheduleLevel, ...]  # by batch, ascending
    always_arm: str  # the arm run at every batch without a schedule
    always_k: int  # its draft length
    crossover: Crossover | None  # where drafting starts costing energy (the sweep's rule)
    source: str  # the sweep's results folder
    backend: str | None = None  # the engine the sweep measured, as its dialect names it
    build: str | None = None  # its version as the server reported it
    prompt_class: str | None = None  # a multi-arm sweep's class it was derived for; None: all pooled
    even_band: float = EVEN_BAND
    left_out: tuple[str, ...] = ()  # arms with no draft length to schedule (n-gram, named ones)
    schema: str = SCHEDULE_SCHEMA

    @property
    def batches(self) -> tuple[int, ...]:
        return tuple(level.batch for level in self.levels)

    @property
    def kept_in_band(self) -> tuple[int, ...]:
        """The batches whose decision was inside the band and left as always-draft had it."""
        return tuple(level.batch for level in self.levels if level.in_band)

    @property
    def max_k(self) -> int:
        return max((level.k for level in self.levels), default=0)

    def level_at(self, batch: int) -> ScheduleLevel:
        """The level that governs a runtime batch: the one at or below it (the first below all)."""
        if batch < 1:
            raise ValueError(f"a batch is a whole number from 1, not {batch}")
        i = bisect.bisect_right(self.batches, batch) - 1
        return self.levels[max(i, 0)]

    def k_at(self, batch: int) -> int:
        """The draft length the engine runs at `batch` concurrent requests under this schedule."""
        return self.level_at(batch).k
