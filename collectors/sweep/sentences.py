"""A sweep summary's verdicts as sentences, and its Markdown (the table, then the sentences), shared by the CLI, `report`, the run's files and the
dashboard: the paired sweep's crossover and recommendation, a multi-arm sweep's best arms per class.

Pitfalls handled: every sentence is read from the summary, where one rule made the figures
(`rule.judge`, best_arms.py), so every rendering says the same; a batch without a trustworthy pair
is named with why; a failed arm is named with its reason.
"""

from __future__ import annotations

from collectors.sweep.checks import ENERGY_ONLY
from collectors.sweep.open_loop_tables import (
    CLOSED_TITLE,
    markdown_table,
    open_loop_markdown,
    open_loop_sentences,
)
from collectors.sweep.records import ArmsSummary, PairedSummary, Summary
from collectors.sweep.rule import Crossover
from collectors.sweep.schedule_check import check_sentences
from collectors.sweep.tables import arms_cells, cell, table_cells


def sentences(record: Summary) -> list[str]:
    """The verdict sentences of a summary of either kind."""
    return arms_sentences(record) if isinstance(record, ArmsSummary) else verdict_sentences(record)


def verdict_sentences(record: PairedSummary) -> list[str]:
    """The crossover, the recommendation, the batches left out and the idle baseline, as sentences."""
    assert isinstance(record, PairedSummary)
    lines = _closed_loop_sentences(record) if record.rows or not record.open_loop else []
    if record.open_loop:
        lines += open_loop_sentences(record.open_loop)
    if record.idle_w is not None:
        lines.append(f"Idle power {record.idle_w:.1f} W; net energy subtracts it over each window.")
    elif record.idle_flag:
        lines.append(f"Idle power not used: {record.idle_flag.message}.")
    return lines


def _closed_loop_sentences(record: PairedSummary) -> list[str]:
    lines = []
    if record.open_loop:  # say which load these figures came from
        batches = ", ".join(str(t.batch) for t in record.rows)
        lines.append(f"Closed-loop load: B requests at once, B = {batches}.")
    cross = record.crossover
    if cross:
        lines.append(
            f"Energy crossover {crossover_at(cross)} concurrent requests, where the draft/plain energy "
            f"ratio rises through 1.0; {band_interval(cross)} within the ±{100 * cross.even_band:.0f} % "
            "noise band."
        )
    lines.append(f"Recommendation: {record.recommendation}.")
    no_meter = [u.batch for u in record.untrusted if set(u.because) <= ENERGY_ONLY]
    if no_meter:
        lines.append(
            f"Energy not measured at B={', '.join(map(str, no_meter))} (no meter): "
            "speed ratios only, and no energy verdict."
        )
    for u in record.untrusted:
        if u.batch not in no_meter:
            lines.append(
                f"No trustworthy pair at B={u.batch}: {', '.join(u.because)} "
                "(its ratios are shown in parentheses, not used)."
            )
    return lines


def crossover_at(cross: Crossover) -> str:
    """The batch where the energy ratio rises through 1.0: "≈ 1.97", or "≤ 1" when the ratio is
    above 1.0 from the smallest batch judged."""
    return f"≈ {cross.batch_at_1:.3g}" if cross.batch_at_1 is not None else f"≤ {cross.lowest_batch}"


def band_interval(cross: Crossover) -> str:
    """The batches between which the ratio crosses the break-even band: "between 1.78 and 2.49"."""
    low = f"{cross.band_low:.3g}" if cross.band_low is not None else f"≤ {cross.lowest_batch}"
    return f"between {low} and {cross.band_high:.3g}"


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def arms_sentences(record: ArmsSummary) -> list[str]:
    """Per class (and batch): the best arm by energy and by speed, the 60 % line, width advice, settings."""
    assert isinstance(record, ArmsSummary)
    lines = []
    line_pct = round(100 * (record.rule.acceptance_line or 0.0))
    for v in record.verdicts:
        where = f"{v.prompt_class} at {_requests(v.batch)}"
        if not v.plain_trusted:
            lines.append(f"{where}: no trustworthy plain point, so no arm is compared.")
            continue
        if v.differ:
            lines.append(
                f"{where}: best by energy {v.best_energy}, by speed {v.best_speed} "
                "(they differ: the faster arm costs more energy per token)."
            )
        else:
            lines.append(f"{where}: best by energy and by speed {v.best_energy}.")
        if v.below_line:
            arms = ", ".join(f"{b.arm} {cell(b.acceptance, '%')}" for b in v.below_line)
            verdict = "every one cost energy" if v.below_line_all_cost else "not every one cost energy"
            lines.append(f"  Below {line_pct} % acceptance ({arms}): {verdict}.")
        lines += [f"  Width: {advice}." for advice in v.width_advice]
        lines += [f"  Setting: {setting}" for setting in v.settings]
    for off in record.turn_off:
        lines.append(
            f"{off.prompt_class}: drafting pays up to {_requests(off.batch)}. Setting: {off.setting}"
        )
    for w in record.void_waived:
        why = "n-gram copying found nothing to copy there" if w.ngram else "it drafted nothing there"
        lines.append(
            f"{w.arm} on {w.prompt_class}: {why}, but it drafts on {', '.join(w.drafts_on)}, "
            "so that point measures its plain decoding and counts (not a void arm)."
        )
    lines += check_sentences(record.schedule or ())
    for arm, why in record.failed_arms.items():
        lines.append(f"Arm {arm} failed, its points after that left out: {why}")
    if record.idle_w is not None:
        lines.append(f"Idle power {record.idle_w:.1f} W.")
    elif record.idle_flag:
        lines.append(f"Idle power not used: {record.idle_flag.message}.")
    return lines


def to_markdown(record: Summary) -> str:
    """The table and the verdict sentences, of a summary of either kind."""
    header, rows = arms_cells(record) if isinstance(record, ArmsSummary) else table_cells(record)
    open_loop = record.open_loop if isinstance(record, PairedSummary) else None
    lines = [f"{CLOSED_TITLE}:", ""] if open_loop and rows else []
    lines += [*markdown_table(header, rows), ""] if rows or not open_loop else []
    lines += open_loop_markdown(open_loop) if open_loop else []
    lines += sentences(record)
    return "\n".join(lines) + "\n"
