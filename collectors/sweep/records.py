"""A sweep summary as frozen records, with units in their names.

`codec.to_json` writes a record as the summary.json form users' scripts read (its field names and
schema strings are kept: a field whose JSON name differs says so in its metadata, e.g.
`committed_tokens` is written "tokens"), and `codec.from_json` reads that form back. Pitfalls
handled: an arm's figures are written inline in a multi-arm row (`flatten`); a field that a form
lacks is left out, not written null (`omit_none`); a verdict is its rule word; a summary/2
crossover (the band's top alone) is read as the rule gives it now, from the summary's own ratios
(`summary_from_json`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors.sweep.codec import from_json
from collectors.sweep.point import Flag as Flag  # summaries carry the points' flag
from collectors.sweep.point import InFlight
from collectors.sweep.rule import Crossover as Crossover
from collectors.sweep.rule import Verdict, judge

SUMMARY_SCHEMA = "spectop.summary/2"  # /2: a crossover and its break-even band; trust per batch
ARMS_SUMMARY_SCHEMA = "spectop.summary-arms/1"


@dataclass(frozen=True, slots=True)
class ArmFigures:
    """One arm at one batch (and class): ratios of its points' totals (aggregate.py)."""

    points: int
    trusted: bool
    committed_tokens: int = field(metadata={"json": "tokens"})
    duration_s: float
    energy_window_s: float = field(metadata={"json": "energy_s"})
    energy_j: float | None
    energy_j_at_least: float | None
    tok_s: float | None
    power_w: float | None
    power_w_at_least: float | None
    mj_per_token: float | None
    mj_per_token_at_least: float | None
    net_mj_per_token: float | None
    acceptance: float | None
    mean_advance: float | None
    verified_width: float | None
    concurrency_mean: float | None
    ttft_ms_p50: float | None
    chunk_gap_ms_p95: float | None
    chunk_gap_ms_p99: float | None
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuleUsed:
    even_band: float
    acceptance_line: float | None = field(default=None, metadata={"omit_none": True})  # multi-arm only
    excluding_flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BatchPair:
    """A paired sweep's row: plain and draft at one batch, and the draft's ratios to plain."""

    batch: int
    plain: ArmFigures
    draft: ArmFigures
    speedup: float | None
    energy_ratio: float | None
    net_energy_ratio: float | None
    power_ratio: float | None
    void: bool
    trusted: bool
    verdict: Verdict | None
    excluded_points: int
    excluded: tuple[str, ...]
    untrusted_because: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PairUntrusted:
    batch: int
    because: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RatePair:
    """An open-loop row: plain and draft at one offered rate, each with the requests it had in
    flight (pooled over the points its figures come from), and the draft's ratios to plain."""

    rate_rps: float
    arrivals: str
    plain: ArmFigures
    draft: ArmFigures
    plain_in_flight: InFlight | None
    draft_in_flight: InFlight | None
    speedup: float | None
    energy_ratio: float | None
    net_energy_ratio: float | None
    power_ratio: float | None
    void: bool
    trusted: bool
    verdict: Verdict | None
    excluded_points: int
    excluded: tuple[str, ...]
    untrusted_because: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RateUntrusted:
    rate_rps: float
    because: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OpenLoopSummary:
    """The open-loop points' table, and the crossover and recommendation read from it on plain's
    achieved mean concurrency (open_loop_summary.py)."""

    arrivals: str
    rows: tuple[RatePair, ...]
    crossover: Crossover | None
    recommendation: str
    untrusted: tuple[RateUntrusted, ...]


@dataclass(frozen=True, slots=True)
class PairedSummary:
    """Note 25's table, the crossover and the recommendation (schema "spectop.summary/2")."""

    schema: str
    points: int
    planned_points: int | None
    idle_w: float | None
    idle_flag: Flag | None
    rows: tuple[BatchPair, ...]
    rule: RuleUsed
    crossover: Crossover | None
    recommendation: str
    untrusted: tuple[PairUntrusted, ...]
    flags: tuple[str, ...]
    # the open-loop points (--rate), apart from the closed-loop table above; absent without them
    open_loop: OpenLoopSummary | None = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True, slots=True)
class ArmEntry:
    """A multi-arm sweep's row: one arm at one class and batch, against plain there."""

    prompt_class: str
    batch: int
    arm: str
    figures: ArmFigures = field(metadata={"flatten": True})  # its `trusted` is the entry's, plain's too
    excluded: tuple[str, ...] = ()
    backend: str | None = None
    build: str | None = None
    command: str | None = None
    energy_ratio: float | None = None
    speedup: float | None = None
    verdict: Verdict | None = None


@dataclass(frozen=True, slots=True)
class BelowLine:
    arm: str
    acceptance: float | None
    verdict: Verdict | None


@dataclass(frozen=True, slots=True)
class ClassVerdict:
    """The best arms at one class and batch (best_arms.py)."""

    prompt_class: str
    batch: int
    plain_trusted: bool
    best_energy: str
    best_speed: str
    differ: bool
    below_line: tuple[BelowLine, ...]
    below_line_all_cost: bool
    width_advice: tuple[str, ...]
    settings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnOff:
    prompt_class: str
    batch: int
    setting: str


@dataclass(frozen=True, slots=True)
class VoidWaived:
    arm: str
    prompt_class: str
    drafts_on: tuple[str, ...]
    ngram: bool


@dataclass(frozen=True, slots=True)
class ArmUntrusted:
    prompt_class: str
    batch: int
    arm: str
    because: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScheduleCheck:
    """The scheduled arm at one class and batch against the lower envelope of plain and always-draft,
    and the K = 0 arm's cost against plain (schedule_check.py); None where not measured or trusted."""

    prompt_class: str
    batch: int
    envelope_arm: str | None
    envelope_mj_per_token: float | None
    scheduled_mj_per_token: float | None
    above_envelope: float | None  # scheduled / envelope - 1
    within_band: bool | None
    k0_energy_cost: float | None  # k0 mJ/token / plain - 1
    k0_time_cost: float | None  # k0 time per output token / plain's - 1


@dataclass(frozen=True, slots=True)
class LoadVerification:
    """Whether a schedule, measured, saves over a load against always-draft and plain."""

    load: Mapping[str, float]  # batch (as text) -> share of time (of tokens with `by_tokens`)
    prompt_class: str
    scheduled_mj_per_token: float | None
    always_mj_per_token: float | None
    plain_mj_per_token: float | None
    saving_vs_always: float | None  # 1 - scheduled / always-draft
    saving_vs_plain: float | None
    above_band: tuple[int, ...]  # batches where the scheduled arm sits above the envelope's band
    verified: bool
    line: str


@dataclass(frozen=True, slots=True)
class ArmsSummary:
    """Seed 001's table per class and the best arms (schema "spectop.summary-arms/1")."""

    schema: str
    points: int
    planned_points: int | None
    idle_w: float | None
    idle_flag: Flag | None
    arms: tuple[str, ...]
    classes: tuple[str, ...]
    rows: tuple[ArmEntry, ...]
    verdicts: tuple[ClassVerdict, ...]
    turn_off: tuple[TurnOff, ...]
    round_energy_mj: Mapping[str, float]  # per draft length, as text
    failed_arms: Mapping[str, str]
    void_waived: tuple[VoidWaived, ...]
    untrusted: tuple[ArmUntrusted, ...]
    rule: RuleUsed
    flags: tuple[str, ...]
    # with a scheduled or k0 arm (schedule_check.py); left out of summary.json without one
    schedule: tuple[ScheduleCheck, ...] | None = field(default=None, metadata={"omit_none": True})


Summary = PairedSummary | ArmsSummary


def summary_from_json(data: Mapping[str, Any]) -> Summary:
    """A summary's JSON form (a recording's, a saved summary.json) as its record, read by its schema."""
    if data.get("schema") == ARMS_SUMMARY_SCHEMA:
        arms: ArmsSummary = from_json(ArmsSummary, data)
        return arms
    paired: PairedSummary = from_json(PairedSummary, data)
    if Crossover.is_old_form(data.get("crossover")):
        # summary/2 saved the band's top as the crossover: judge its trusted ratios again by the rule
        ratios = [(t.batch, t.energy_ratio) for t in paired.rows if t.trusted and t.energy_ratio is not None]
        paired = dataclasses.replace(paired, crossover=judge(ratios, paired.rule.even_band).crossover)
    return paired
