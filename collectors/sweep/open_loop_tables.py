"""The open-loop points' table and sentences, beside the closed-loop ones (tables.py, sentences.py):
every rendering (CLI, `spectop report`, summary.md, summary.csv) says which load each figure came
from: closed-loop, B requests at once, or open-loop, requests arriving at a rate R.

Pitfall handled: a run without open-loop points renders exactly as before (its files unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from collectors.sweep.checks import ENERGY_ONLY
from collectors.sweep.point import InFlight
from collectors.sweep.records import BatchPair, OpenLoopSummary, RatePair
from collectors.sweep.rule import Crossover
from collectors.sweep.tables import MAIN_COLUMNS, VERDICT_WORDS, AtLeast, Unused, cell

CLOSED_TITLE = "closed-loop load: B requests at once"
OPEN_TITLE = "open-loop load: requests arriving at R per second"

RateColumn = tuple[str, Callable[[RatePair], Any], str]


def _mean(f: InFlight | None) -> float | None:
    return f.mean if f else None


def _spread(f: InFlight | None) -> str:
    """ "1/3/7": the time-weighted p50, p90 and most requests in flight."""
    if f is None or f.mean is None:
        return ""
    return f"{f.p50}/{f.p90}/{f.maximum}"


def _energy(value: float | None, at_least: float | None) -> float | AtLeast | None:
    return value if value is not None else (AtLeast(at_least) if at_least is not None else None)


def _marked(value: float | None, trusted: bool) -> float | Unused | None:
    return Unused(value) if value is not None and not trusted else value


RATE_COLUMNS: list[RateColumn] = [
    ("rate/s", lambda t: t.rate_rps, "g"),
    ("arrivals", lambda t: t.arrivals, "s"),
    (
        "in flight p/d",
        lambda t: f"{cell(_mean(t.plain_in_flight), '.2f')}/{cell(_mean(t.draft_in_flight), '.2f')}",
        "s",
    ),
    ("p50/p90/max plain", lambda t: _spread(t.plain_in_flight), "s"),
    ("p50/p90/max draft", lambda t: _spread(t.draft_in_flight), "s"),
    ("plain tok/s", lambda t: t.plain.tok_s, ".1f"),
    ("draft tok/s", lambda t: t.draft.tok_s, ".1f"),
    ("speed", lambda t: _marked(t.speedup, t.plain.trusted and t.draft.trusted), ".2fx"),
    ("plain mJ/token", lambda t: _energy(t.plain.mj_per_token, t.plain.mj_per_token_at_least), ".0f"),
    ("draft mJ/token", lambda t: _energy(t.draft.mj_per_token, t.draft.mj_per_token_at_least), ".0f"),
    ("energy", lambda t: _marked(t.energy_ratio, t.trusted), ".2fx"),
    ("acceptance", lambda t: t.draft.acceptance, "%"),
    ("verdict", lambda t: VERDICT_WORDS[t.verdict] if t.verdict else "not used", "s"),
    ("flags", lambda t: ",".join(rate_flags(t)), "s"),
]


def rate_flags(t: RatePair) -> list[str]:
    return sorted(set(t.plain.flags) | set(t.draft.flags))


def rate_cells(record: OpenLoopSummary) -> tuple[list[str], list[list[str]]]:
    header = [name for name, _, _ in RATE_COLUMNS]
    return header, [[cell(get(t), spec) for _, get, spec in RATE_COLUMNS] for t in record.rows]


def main_cells(record: OpenLoopSummary) -> list[list[str]]:
    """Each rate as a row of note 25's table (MAIN_COLUMNS), "20/s" in its requests column: a rate's
    row has every figure those columns read but the batch."""
    rows = []
    for t in record.rows:
        pair = cast(BatchPair, t)
        rows.append([f"{t.rate_rps:g}/s", *(cell(get(pair), spec) for _, get, spec in MAIN_COLUMNS[1:])])
    return rows


def _rates(record: OpenLoopSummary) -> str:
    return ", ".join(f"{t.rate_rps:g}" for t in record.rows)


def open_loop_sentences(record: OpenLoopSummary) -> list[str]:
    """The open-loop crossover and recommendation (on plain's achieved mean concurrency) and the
    rates without a trustworthy pair."""
    lines = [
        f"Open-loop load: {record.arrivals} arrivals at {_rates(record)} requests/s; each rate is "
        "judged at the mean concurrency plain achieved there (requests in flight, time-averaged)."
    ]
    cross = record.crossover
    if cross:
        lines.append(
            f"Open-loop energy crossover {_at(cross)} requests in flight, where the draft/plain energy "
            f"ratio rises through 1.0; between {_low(cross)} and {cross.band_high:.3g} within the "
            f"±{100 * cross.even_band:.0f} % noise band."
        )
    lines.append(f"Open-loop recommendation: {record.recommendation}.")
    for u in record.untrusted:
        if set(u.because) <= ENERGY_ONLY:
            lines.append(f"Energy not measured at {u.rate_rps:g}/s (no meter): speed ratios only.")
        else:
            lines.append(
                f"No trustworthy pair at {u.rate_rps:g}/s: {', '.join(u.because)} "
                "(its ratios are shown in parentheses, not used)."
            )
    return lines


def _at(cross: Crossover) -> str:
    return f"≈ {cross.batch_at_1:.3g}" if cross.batch_at_1 is not None else f"≤ {cross.lowest_batch:g}"


def _low(cross: Crossover) -> str:
    return f"{cross.band_low:.3g}" if cross.band_low is not None else f"≤ {cross.lowest_batch:g}"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def open_loop_markdown(record: OpenLoopSummary) -> list[str]:
    """The open-loop table under its heading, as summary.md has it."""
    return [f"{OPEN_TITLE}:", "", *markdown_table(*rate_cells(record)), ""]
