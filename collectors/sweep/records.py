"""A sweep summary as frozen records, with units in their names, and their one JSON codec.

`to_json` writes a record as the summary.json form users' scripts read (its field names and
schema strings are kept: a field whose JSON name differs says so in its metadata, e.g.
`committed_tokens` is written "tokens"), and `from_json` reads that form back. Pitfalls handled:
key order is the records' field order, so a summary written from records is the same text as one
written before; an arm's figures are written inline in a multi-arm row (`flatten`); a field that a
form lacks is left out, not written null (`omit_none`); a verdict is its rule word.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from collectors.sweep.rule import Verdict
from collectors.sweep.store import ARMS_SUMMARY_SCHEMA


@dataclass(frozen=True, slots=True)
class Flag:
    code: str
    message: str


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
class Crossover:
    """Where the energy ratio rises through the band's top, between two measured batches (rule.py)."""

    below: int
    above: int
    batch: float
    ratio: float


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


Summary = PairedSummary | ArmsSummary


def as_summary(summary: Summary | Mapping[str, Any]) -> Summary:
    """A summary record; a JSON form (an event's, a recording's, a saved file's) read by its schema."""
    if isinstance(summary, PairedSummary | ArmsSummary):
        return summary
    kind = ArmsSummary if summary.get("schema") == ARMS_SUMMARY_SCHEMA else PairedSummary
    record: Summary = from_json(kind, summary)
    return record


def to_json(value: Any) -> Any:
    """A record (or a value in one) as its JSON form: plain dicts, lists, numbers, text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.metadata.get("flatten"):
                out.update(to_json(item))
            elif not (item is None and f.metadata.get("omit_none")):
                out[f.metadata.get("json", f.name)] = to_json(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


def from_json(kind: Any, data: Any) -> Any:
    """The record of type `kind` (or a value of that type) read from its JSON form."""
    if data is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        present = [k for k in typing.get_args(kind) if k is not type(None)]
        return from_json(present[0], data)
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(from_json(item, v) for v in data)
    if origin is Mapping or origin is dict:
        item = typing.get_args(kind)[1]
        return {k: from_json(item, v) for k, v in data.items()}
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind(data)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        values = {}
        for f in dataclasses.fields(kind):
            if f.metadata.get("flatten"):
                values[f.name] = from_json(hints[f.name], data)
            else:
                values[f.name] = from_json(hints[f.name], data.get(f.metadata.get("json", f.name)))
        record: Any = kind(**values)
        return record
    if kind is float and isinstance(data, int):
        return float(data)
    return data


@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    return typing.get_type_hints(kind)
