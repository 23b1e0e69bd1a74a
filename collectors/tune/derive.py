"""The schedule a finished sweep implies: at each batch, the draft length with the lowest energy per token.

The rule (collectors/docs/tune.md): at each measured batch every arm with a draft length competes
(plain is K = 0, `draft-N` is N, a paired run's `draft` is its server's length); the one with the
lowest mJ/token wins, unless the always-draft arm costs at most the break-even band more than it
(rule.EVEN_BAND: a smaller difference is not a measured one), in which case always-draft's K is
kept and the level says so. A batch without trustworthy figures keeps always-draft's K below the
crossover and is off from it on. A multi-arm run's classes are pooled (energy over tokens, as
swept) unless one class is asked for. Pitfalls handled: a run whose ratios give no crossover
(drafting pays everywhere, costs everywhere, or flips back and forth) has no schedule to apply and
says why; arms that are no draft length (n-gram copying, a user's named arm) are left out and listed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError
from collectors.servers import registry
from collectors.sweep.records import ArmsSummary, PairedSummary, Summary
from collectors.sweep.request import SavedRun
from collectors.sweep.rule import Crossover, judge
from collectors.sweep.run_meta import RunMeta
from collectors.sweep.settings import draft_length
from collectors.sweep.store import load_run
from collectors.sweep.summary import summary_of
from collectors.tune.schedule import DraftSchedule, ScheduleLevel


@dataclass(frozen=True, slots=True)
class Cell:
    """One arm at one batch: its energy per token and whether the sweep trusted it."""

    mj_per_token: float | None
    trusted: bool


Table = Mapping[str, Mapping[int, Cell]]  # arm -> batch -> cell


def derive_schedule(
    run: SavedRun | Path,
    draft_tokens: int | None = None,
    prompt_class: str | None = None,
) -> DraftSchedule:
    """The lowest-energy schedule of a finished sweep (paired or multi-arm); `draft_tokens` is a
    paired run's draft length where its files do not say it."""
    run_dir = run.run_dir if isinstance(run, SavedRun) else run
    meta, rows = load_run(run_dir)
    summary: Summary = run.summary if isinstance(run, SavedRun) else summary_of(rows, meta)
    if isinstance(summary, PairedSummary) and prompt_class is not None:
        raise SpectopError(
            f"{run_dir.name} is a paired sweep, with no prompt class {prompt_class!r}", "drop --class"
        )
    if isinstance(summary, PairedSummary):
        table: Table = _paired_table(summary)
    else:
        table = _arms_table(summary, prompt_class)
    lengths = _lengths(table, draft_tokens if draft_tokens is not None else _argv_length(meta), run_dir)
    drafting = [arm for arm in table if lengths.get(arm, 0) > 0]
    always = "draft" if isinstance(summary, PairedSummary) else _best_fixed(table, drafting, run_dir)
    if isinstance(summary, PairedSummary):
        crossover, recommendation = summary.crossover, summary.recommendation
    else:
        judged = judge(_best_ratios(table, drafting), summary.rule.even_band)
        crossover, recommendation = judged.crossover, judged.recommendation
    if crossover is None:
        raise SpectopError(
            f"{run_dir.name} has no crossover to schedule around: {recommendation}",
            "a schedule needs drafting to pay at low batches and cost above; re-run the sweep with "
            "more passes, or over batches where that happens",
        )
    levels = tuple(
        _level(batch, table, lengths, always, crossover, summary.rule.even_band)
        for batch in sorted({b for cells in table.values() for b in cells})
    )
    server = meta.servers.get(always) or meta.servers.get("draft")
    return DraftSchedule(
        levels=levels,
        always_arm=always,
        always_k=lengths[always],
        crossover=crossover,
        source=str(run_dir),
        backend=server.backend if server else _entry_backend(summary, always),
        build=server.build if server else None,
        prompt_class=prompt_class,
        even_band=summary.rule.even_band,
        left_out=tuple(arm for arm in _all_arms(summary) if arm not in lengths),
    )


def _argv_length(meta: RunMeta) -> int | None:
    """A paired run's draft length as its draft arm's command says, read by the arm's dialect, or its server."""
    arm = next((a for a in meta.arms if a.name == "draft"), None)
    server = meta.servers.get("draft")
    dialect = registry.find(server.backend) if server and server.backend else None
    from_argv = dialect.draft_tokens_in(arm.argv) if arm and arm.argv and dialect else None
    # else what the running server said of itself when the sweep identified it
    return from_argv if from_argv is not None else (server.draft_tokens if server else None)


def _paired_table(summary: PairedSummary) -> Table:
    # a pair's trust is what the rule judged it by: both arms or neither
    return {
        arm: {t.batch: Cell(getattr(t, arm).mj_per_token, t.trusted) for t in summary.rows}
        for arm in ("plain", "draft")
    }


def _arms_table(summary: ArmsSummary, prompt_class: str | None) -> Table:
    if prompt_class is not None and prompt_class not in summary.classes:
        raise SpectopError(
            f"the sweep has no prompt class {prompt_class!r}", f"give one of {', '.join(summary.classes)}"
        )
    table: dict[str, dict[int, Cell]] = {}
    for arm in summary.arms:
        for batch in sorted({t.batch for t in summary.rows}):
            entries = [
                t.figures
                for t in summary.rows
                if t.arm == arm
                and t.batch == batch
                and prompt_class in (None, t.prompt_class)
                and t.figures.points  # an arm named in the plan that measured nothing here
            ]
            if not entries:
                continue
            energy = [f.energy_j for f in entries]
            tokens = sum(f.committed_tokens for f in entries)
            known = all(e is not None for e in energy) and tokens > 0
            mj = 1000.0 * sum(e for e in energy if e is not None) / tokens if known else None
            table.setdefault(arm, {})[batch] = Cell(mj, known and all(f.trusted for f in entries))
    return table


def _lengths(table: Table, draft_tokens: int | None, run_dir: Path) -> dict[str, int]:
    """Each arm's draft length: plain 0, `draft-N` N, a paired `draft` the one given."""
    lengths = {"plain": 0}
    for arm in table:
        n = draft_length(arm)
        if n is not None:
            lengths[arm] = n
        elif arm == "draft" and draft_tokens is not None:
            lengths[arm] = draft_tokens
        elif arm == "draft":
            raise SpectopError(
                f"the draft length of {run_dir.name}'s draft arm is not in its files",
                "give --draft-tokens N, the most tokens its server drafts per step",
            )
    if len(lengths) == 1:
        raise SpectopError(
            f"{run_dir.name} has no draft arm with a draft length to schedule",
            "sweep a draft arm (--draft, or --draft-max 2,4,8 for several lengths)",
        )
    return lengths


def _ratio(table: Table, arm: str, batch: int) -> float | None:
    plain, cell = table["plain"].get(batch), table[arm].get(batch)
    if not (plain and cell and plain.trusted and cell.trusted and plain.mj_per_token and cell.mj_per_token):
        return None
    return cell.mj_per_token / plain.mj_per_token


def _best_fixed(table: Table, drafting: list[str], run_dir: Path) -> str:
    """The draft arm a user would run at every batch: the lowest geometric mean ratio to plain."""
    scores = {}
    for arm in drafting:
        ratios = [r for b in table[arm] if (r := _ratio(table, arm, b)) is not None]
        if ratios:
            scores[arm] = sum(math.log(r) for r in ratios) / len(ratios)
    if not scores:
        raise SpectopError(f"{run_dir.name} has no trustworthy draft point beside plain", "re-run the sweep")
    return min(scores, key=lambda arm: scores[arm])


def _best_ratios(table: Table, drafting: list[str]) -> list[tuple[int, float]]:
    """Per batch, the lowest draft/plain energy ratio of any draft length: where drafting can still pay."""
    out = []
    for batch in sorted(table["plain"]):
        ratios = [r for arm in drafting if (r := _ratio(table, arm, batch)) is not None]
        if ratios:
            out.append((batch, min(ratios)))
    return out


def _level(
    batch: int, table: Table, lengths: Mapping[str, int], always: str, crossover: Crossover, band: float
) -> ScheduleLevel:
    def mj(arm: str) -> float | None:
        cell = table[arm].get(batch)
        return cell.mj_per_token if cell else None

    candidates = {
        arm: cell.mj_per_token
        for arm in lengths
        if (cell := table.get(arm, {}).get(batch)) and cell.trusted and cell.mj_per_token is not None
    }
    if always not in candidates or "plain" not in candidates:
        arm, trusted, in_band = ("plain" if batch >= crossover.above else always), False, False
    else:
        best = min(candidates, key=lambda arm: (candidates[arm], arm != always))
        keep = candidates[always] <= candidates[best] * (1.0 + band)
        arm, trusted, in_band = (always if keep else best), True, keep and best != always
    return ScheduleLevel(
        batch, lengths[arm], arm, mj(arm), mj(always), mj("plain"), in_band=in_band, trusted=trusted
    )


def _all_arms(summary: Summary) -> tuple[str, ...]:
    return ("plain", "draft") if isinstance(summary, PairedSummary) else summary.arms


def _entry_backend(summary: Summary, arm: str) -> str | None:
    if isinstance(summary, ArmsSummary):
        return next((t.backend for t in summary.rows if t.arm == arm and t.backend), None)
    return None
