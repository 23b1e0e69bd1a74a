"""The sweep's summary: per prompt class, batch and arm, each arm's figures against plain's, and the
verdicts read from them; the paired sweep's is note 25's table (collectors/docs/note25.md) plus G,
width, tails, net energy, the crossover and a recommendation.

A paired sweep is the multi-arm sweep with the arm "draft" and one prompt class, and both are
summarized by the same figures (aggregate.py) and the same comparison with plain (`against_plain`);
they differ in the form saved: a paired run's summary.json is note 25's table (`SUMMARY_SCHEMA`), a
multi-arm run's the table per class with the best arms (`ARMS_SUMMARY_SCHEMA`, best_arms.py).
Pitfalls handled: only trustworthy points (`checks.EXCLUDING`) feed the ratios, the crossover and
the recommendation; an arm with none is still shown, from all its points, and marked untrusted.
In a multi-arm run, an arm that drafted nothing on one class but drafts on another (n-gram copying
on prose: nothing to copy) measured that class honestly, so its point there is not void.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from collectors.energy import ledger
from collectors.sweep import checks
from collectors.sweep.aggregate import aggregate, arm_figures
from collectors.sweep.best_arms import ACCEPTANCE_LINE, best_arms, round_energy_mj, turn_off, void_waived
from collectors.sweep.codec import to_json
from collectors.sweep.open_loop_summary import open_loop_of
from collectors.sweep.point import ServerIdentity, SweepPoint
from collectors.sweep.records import (
    ARMS_SUMMARY_SCHEMA,
    SUMMARY_SCHEMA,
    ArmEntry,
    ArmFigures,
    ArmsSummary,
    ArmUntrusted,
    BatchPair,
    PairedSummary,
    PairUntrusted,
    RuleUsed,
    Summary,
)
from collectors.sweep.rule import EVEN_BAND, Verdict, at_batch, classify, interpolate, judge, judge_speed
from collectors.sweep.run_meta import RunMeta
from collectors.sweep.schedule_check import schedule_checks
from collectors.sweep.sentences import to_markdown
from collectors.sweep.store import RunStore, load_run
from collectors.sweep.tables import MAIN_COLUMNS, table_cells, to_table_csv

__all__ = [  # the live verdict and the sweep panel read these from here
    "ARMS_SUMMARY_SCHEMA",
    "MAIN_COLUMNS",
    "SUMMARY_SCHEMA",
    "aggregate",
    "at_batch",
    "interpolate",
    "is_arms_run",
    "rewrite_summary",
    "summary_of",
    "summarize",
    "summarize_saved",
    "table_cells",
]
Row = SweepPoint


@dataclass(frozen=True, slots=True)
class AgainstPlain:
    """An arm's figures over plain's at the same class and batch, and the rule's reading of them."""

    energy_ratio: float | None
    speedup: float | None
    trusted: bool  # both arms trusted, and an energy ratio to judge
    verdict: Verdict | None  # plain itself has none


def against_plain(plain: ArmFigures, arm: ArmFigures, is_plain: bool = False) -> AgainstPlain:
    energy_ratio = ledger.draft_over_plain(arm.mj_per_token, plain.mj_per_token)
    trusted = arm.trusted and plain.trusted and energy_ratio is not None
    return AgainstPlain(
        energy_ratio,
        ledger.draft_over_plain(arm.tok_s, plain.tok_s),
        trusted,
        classify(energy_ratio) if trusted and energy_ratio is not None and not is_plain else None,
    )


def is_arms_run(meta: RunMeta, rows: Sequence[Row]) -> bool:
    """A multi-arm run: its meta says so, or (a run cut short before its meta) its points carry a class."""
    return meta.is_arms or any(r.prompt_class for r in rows)


def summary_of(rows: Sequence[Row], meta: RunMeta | None = None) -> Summary:
    """The summary of all points so far (a cancelled sweep summarizes what it has), in its run's form."""
    meta = meta or RunMeta()
    return _arms_summary(rows, meta) if is_arms_run(meta, rows) else _paired_summary(rows, meta)


def summarize(rows: Sequence[Row], meta: RunMeta | None = None) -> dict[str, Any]:
    """`summary_of` in its JSON form, as summary.json holds it."""
    return summarize_record(summary_of(rows, meta))


def summarize_record(record: Summary) -> dict[str, Any]:
    """A summary record in its JSON form."""
    form: dict[str, Any] = to_json(record)
    return form


def summarize_saved(run_dir: Path, skipped: list[str] | None = None) -> Summary:
    """The summary of a saved run of either kind, from its files, without writing anything."""
    meta, rows = load_run(run_dir, skipped)
    return summary_of(rows, meta)


def rewrite_summary(run_dir: Path) -> Summary:
    """Summarize a run of either kind from its files (a sweep cut short, or saved by an older
    spectop) and save it."""
    meta, rows = load_run(run_dir)
    summary = summary_of(rows, meta)
    RunStore(run_dir).write_summary(summary, to_table_csv(summary), to_markdown(summary))
    return summary


def _batch_row(batch: int, rows: Sequence[Row], excluded: Sequence[tuple[str, ...]]) -> BatchPair:
    arms = {  # a point without energy still has its speed (checks.ENERGY_ONLY)
        arm: arm_figures(
            [r for r in rows if r.arm == arm],
            [checks.for_speed(c) for r, c in zip(rows, excluded) if r.arm == arm],
        )
        for arm in ("plain", "draft")
    }
    plain, draft = arms["plain"], arms["draft"]
    compared = against_plain(plain, draft)
    if any(checks.ENERGY_ONLY.intersection(codes) for codes in excluded):  # whatever its energy reads
        compared = replace(compared, trusted=False, verdict=None)
    reasons = sorted({code for codes in excluded for code in codes})
    missing = [f"no {arm} point" for arm in ("plain", "draft") if not arms[arm].points]
    draft_flags = {c for r in rows if r.arm == "draft" for c in r.codes}
    return BatchPair(
        batch=batch,
        plain=plain,
        draft=draft,
        speedup=compared.speedup,
        energy_ratio=compared.energy_ratio,
        net_energy_ratio=ledger.draft_over_plain(draft.net_mj_per_token, plain.net_mj_per_token),
        power_ratio=ledger.draft_over_plain(draft.power_w, plain.power_w),
        void="void" in draft_flags,
        trusted=compared.trusted,
        verdict=compared.verdict,
        excluded_points=sum(1 for codes in excluded if codes),
        excluded=tuple(reasons),
        # why this batch has no pair the verdict may use
        untrusted_because=() if compared.trusted else tuple((reasons + missing) or ["no energy measured"]),
    )


def _paired_summary(rows: Sequence[Row], meta: RunMeta) -> PairedSummary:
    excluded = checks.exclusions(rows)
    by_batch: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        if row.load is None:  # open-loop points have a table of their own
            by_batch.setdefault(row.batch, []).append(i)
    table = [
        _batch_row(b, [rows[i] for i in by_batch[b]], [excluded[i] for i in by_batch[b]])
        for b in sorted(by_batch)
    ]
    ratios = [(t.batch, t.energy_ratio) for t in table if t.trusted and t.energy_ratio is not None]
    verdict = judge(ratios)
    recommendation = verdict.recommendation
    untrusted = [PairUntrusted(t.batch, t.untrusted_because) for t in table if not t.trusted]
    if not ratios and any(checks.ENERGY_ONLY.intersection(t.excluded) for t in table):
        # no meter: the verdict is speed's alone, from the pairs nothing but the missing energy excludes
        speeds = [(t.batch, t.speedup) for t in table if t.plain.trusted and t.draft.trusted and t.speedup]
        recommendation = judge_speed(speeds)
    elif not ratios and untrusted:
        reasons = sorted({why for u in untrusted for why in u.because})
        recommendation += f" (every batch lacks a trustworthy pair: {', '.join(reasons)})"
    idle_flag = meta.idle_flag or next((r.idle_flag for r in rows if r.idle_flag), None)
    return PairedSummary(
        schema=SUMMARY_SCHEMA,
        points=len(rows),
        planned_points=meta.planned_points,
        idle_w=meta.idle_w or next((r.energy.idle_w for r in rows if r.energy.idle_w is not None), None),
        idle_flag=idle_flag,
        rows=tuple(table),
        rule=RuleUsed(EVEN_BAND, excluding_flags=tuple(sorted(checks.EXCLUDING))),
        crossover=verdict.crossover,
        recommendation=recommendation,
        untrusted=tuple(untrusted),
        flags=_flags(rows),
        open_loop=open_loop_of(rows, excluded, _batch_row),
    )


def _flags(rows: Sequence[Row]) -> tuple[str, ...]:
    return tuple(sorted({c for r in rows for c in r.codes}))


def _exclusions(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    """checks.exclusions, with `void` waived for an arm that drafted on some other class."""
    drafting = {r.arm for r in rows if r.window.drafted}
    return [
        tuple(c for c in codes if not (c == "void" and r.arm in drafting))
        for r, codes in zip(rows, checks.exclusions(rows))
    ]


def _ordered(values: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _entry(cls: str, batch: int, arm: str, block: Sequence[tuple[Row, tuple[str, ...]]]) -> ArmEntry:
    mine = [(r, e) for r, e in block if r.arm == arm]
    server = next((r.server for r, _ in mine if r.server), None) or ServerIdentity()
    return ArmEntry(
        prompt_class=cls,
        batch=batch,
        arm=arm,
        figures=arm_figures([r for r, _ in mine], [e for _, e in mine]),
        excluded=tuple(sorted({c for _, e in mine for c in e})),
        backend=server.backend,
        build=server.build,
        command=server.command,
    )


def _against_plain(entries: Sequence[ArmEntry]) -> list[ArmEntry]:
    """Each entry with its ratios to plain (the first) and the rule's verdict; its figures' trust
    becomes the pair's."""
    plain = entries[0].figures
    out = []
    for i, entry in enumerate(entries):
        compared = against_plain(plain, entry.figures, is_plain=i == 0)
        out.append(
            replace(
                entry,
                figures=replace(entry.figures, trusted=compared.trusted),
                energy_ratio=compared.energy_ratio,
                speedup=compared.speedup,
                verdict=compared.verdict,
            )
        )
    return out


def _arms_summary(rows: Sequence[Row], meta: RunMeta) -> ArmsSummary:
    """A row per class, batch and arm, and the verdicts per class (best_arms.py)."""
    excluded = _exclusions(rows)
    arms = list(meta.arm_names or ["plain", *_ordered([r.arm for r in rows if r.arm != "plain"])])
    classes = [c.name for c in meta.classes or ()] or _ordered([r.prompt_class or "" for r in rows])
    table: list[ArmEntry] = []
    verdicts = []
    for cls in classes:
        for batch in sorted({r.batch for r in rows if r.prompt_class == cls}):
            block = [(r, e) for r, e in zip(rows, excluded) if (r.prompt_class, r.batch) == (cls, batch)]
            entries = _against_plain([_entry(cls, batch, arm, block) for arm in arms])
            table += entries
            verdicts.append(best_arms(cls, batch, entries))
    return ArmsSummary(
        schema=ARMS_SUMMARY_SCHEMA,
        points=len(rows),
        planned_points=meta.planned_points,
        idle_w=meta.idle_w,
        idle_flag=meta.idle_flag,
        arms=tuple(arms),
        classes=tuple(classes),
        rows=tuple(table),
        verdicts=tuple(verdicts),
        turn_off=tuple(turn_off(verdicts, table)),
        round_energy_mj=round_energy_mj(table),
        failed_arms=dict(meta.failed_arms or {}),
        void_waived=tuple(void_waived(rows)),
        # what has no trustworthy figure, and why (the CLI's exit code reads it as the paired sweep's)
        untrusted=tuple(
            ArmUntrusted(
                t.prompt_class,
                t.batch,
                t.arm,
                t.excluded or (("no points",) if not t.figures.points else ("no energy measured",)),
            )
            for t in table
            if not t.figures.trusted
        ),
        rule=RuleUsed(EVEN_BAND, ACCEPTANCE_LINE, tuple(sorted(checks.EXCLUDING))),
        flags=_flags(rows),
        schedule=tuple(schedule_checks(table)) or None,
    )
