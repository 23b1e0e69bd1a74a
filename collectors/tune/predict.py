"""The energy a schedule saves over a load profile, against always-draft and plain, with its uncertainty.

Method (collectors/docs/tune.md): at each batch b of the profile, with token share w_b, an arm's
energy per token is its sweep curve read at b (linear in log B between measured batches, clamped
at the ends: rule.at_batch); the schedule runs the arm of the level at or below b. The saving
against always-draft is 1 - sum w_b S_b / sum w_b A_b, and likewise against plain. Its
uncertainty comes from the sweep's repeats: each arm's points at a batch (passes, plain's before
and after) give a standard error of its mean mJ/token; where there is a single point, the rule's
±5 % band is taken as two standard errors. Differences of independent cells add their variances
(a batch where the schedule runs the compared arm itself differs by exactly 0), and the prediction
says ± two standard errors.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from collectors.sweep import checks
from collectors.sweep.rule import at_batch
from collectors.sweep.store import load_run
from collectors.tune.profile import LoadProfile
from collectors.tune.schedule import DraftSchedule


@dataclass(frozen=True, slots=True)
class CellSpread:
    mj_per_token: float
    standard_error: float  # of the mean, mJ/token
    repeats: int


@dataclass(frozen=True, slots=True)
class Saving:
    against: str  # "always-draft" or "plain"
    fraction: float  # of the compared arm's energy over the load
    error: float  # two standard errors, as a fraction
    scheduled_mj_per_token: float
    compared_mj_per_token: float


@dataclass(frozen=True, slots=True)
class Prediction:
    profile: LoadProfile
    savings: tuple[Saving, ...]
    single_repeat_cells: int  # cells whose spread is the band's, not measured


def cell_spreads(
    run_dir: Path, prompt_class: str | None, even_band: float
) -> dict[str, dict[int, CellSpread]]:
    """Each arm's mean mJ/token per batch from its trustworthy points and the spread of its repeats
    (a repeat is one pass and phase, a multi-arm run's classes pooled within it)."""
    _, rows = load_run(run_dir)
    energy: dict[tuple[str, int, int, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for row, codes in zip(rows, checks.exclusions(rows)):
        if codes or row.energy.energy_j is None or not row.window.committed_tokens:
            continue
        if prompt_class is not None and row.prompt_class != prompt_class:
            continue
        key = (row.arm, row.batch, row.pass_index or 0, row.phase)
        energy[key][0] += row.energy.energy_j
        energy[key][1] += row.window.committed_tokens
    repeats: dict[tuple[str, int], list[tuple[float, float]]] = defaultdict(list)
    for (arm, batch, _, _), (joules, tokens) in energy.items():
        repeats[(arm, batch)].append((joules, tokens))
    out: dict[str, dict[int, CellSpread]] = defaultdict(dict)
    for (arm, batch), parts in repeats.items():
        mean = 1000.0 * sum(j for j, _ in parts) / sum(t for _, t in parts)
        values = [1000.0 * j / t for j, t in parts]
        if len(values) > 1:
            error = statistics.stdev(values) / math.sqrt(len(values))
        else:
            error = mean * even_band / 2  # the band as two standard errors
        out[arm][batch] = CellSpread(mean, error, len(values))
    return dict(out)


def predict(
    schedule: DraftSchedule, profile: LoadProfile, cells: Mapping[str, Mapping[int, CellSpread]]
) -> Prediction:
    def curve(arm: str, batch: int) -> tuple[float, float]:
        mine = cells.get(arm, {})
        mean = at_batch([(b, c.mj_per_token) for b, c in mine.items()], batch)
        error = at_batch([(b, c.standard_error) for b, c in mine.items()], batch)
        if mean is None or error is None:
            raise ValueError(f"no trustworthy points of the {arm} arm")
        return mean, error

    savings = []
    for compared, label in ((schedule.always_arm, "always-draft"), ("plain", "plain")):
        scheduled_total = compared_total = variance = 0.0
        for batch, share in profile.token_share.items():
            arm = schedule.level_at(batch).arm
            s_mean, s_err = curve(arm, batch)
            c_mean, c_err = curve(compared, batch)
            scheduled_total += share * s_mean
            compared_total += share * c_mean
            if arm != compared:
                variance += share**2 * (s_err**2 + c_err**2)
        savings.append(
            Saving(
                label,
                1.0 - scheduled_total / compared_total,
                2.0 * math.sqrt(variance) / compared_total,
                scheduled_total,
                compared_total,
            )
        )
    single = sum(1 for arm in cells.values() for c in arm.values() if c.repeats < 2)
    return Prediction(profile, tuple(savings), single)
