"""A sweep run's meta.json as a frozen record: the plan, the arms, the meter and machine, the idle
baseline, the servers; a multi-arm run adds its arm names, prompt classes, shuffle seed and failed
arms.

Written by `codec.to_json(meta)` and read by `codec.from_json(RunMeta, data)` (store.py), with the
keys and order meta.json has always had. Pitfalls handled: a meta.json from an earlier version
lacks fields added since (the plan's `refine`, a multi-arm run's lists): each takes its default; a
paired run's meta has no multi-arm keys at all (`omit_none`), so it still reads as a paired run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.meters.base import MeterInfo
from collectors.sweep.arms import ArmSpec
from collectors.sweep.point import Flag, Machine, ServerIdentity

RUN_SCHEMA = "spectop.run/1"  # meta.json of a paired sweep
ARMS_RUN_SCHEMA = "spectop.run-arms/1"  # meta.json of a multi-arm sweep

_MULTI_ARM = {"omit_none": True}  # a paired (closed-loop) run's meta.json has no such key


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptsSaved:
    """A prompt set (or a multi-arm run's prompt class) with its prompts."""

    name: str
    digest: str | None = None
    prompts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanPrompts:
    """The plan's prompt set as meta.json writes it: its name under "set"."""

    name: str = field(metadata={"json": "set"})
    digest: str | None = None
    prompts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanSaved:
    """The plan's knobs as the run used them (plan.SweepPlan, its prompt set written out)."""

    batches: tuple[int, ...] = ()
    max_tokens: int | None = None
    passes: int | None = None
    prompts: PlanPrompts | None = None
    warmup_tokens: int | None = None
    idle_s: float | None = None
    drift_limit: float | None = None
    fresh_server: bool = False
    route: str | None = None
    temperature: float | None = None
    refine: bool = False
    # open-loop points (a run with --rate only): what plan.SweepPlan calls them
    rates: tuple[float, ...] | None = field(default=None, metadata=_MULTI_ARM)
    arrivals: str | None = field(default=None, metadata=_MULTI_ARM)
    arrival_seed: int | None = field(default=None, metadata=_MULTI_ARM)
    rate_requests: int | None = field(default=None, metadata=_MULTI_ARM)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunMeta:
    schema: str = RUN_SCHEMA
    plan: PlanSaved | None = None
    arms: tuple[ArmSpec, ...] = ()
    meter: MeterInfo | None = None
    machine: Machine | None = None
    planned_points: int | None = None
    idle_w: float | None = None
    idle_flag: Flag | None = None  # why the idle window gave no baseline
    servers: Mapping[str, ServerIdentity] = field(default_factory=dict)
    arm_names: tuple[str, ...] | None = field(default=None, metadata=_MULTI_ARM)
    classes: tuple[PromptsSaved, ...] | None = field(default=None, metadata=_MULTI_ARM)
    shuffle_seed: int | None = field(default=None, metadata=_MULTI_ARM)
    failed_arms: Mapping[str, str] | None = field(default=None, metadata=_MULTI_ARM)

    @property
    def is_arms(self) -> bool:
        return self.schema == ARMS_RUN_SCHEMA
