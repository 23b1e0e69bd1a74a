"""How a sweep summary is written as a table for people and tools: cells and CSV, for a paired
sweep (note 25's table) and a multi-arm one (seed 001's table per class, collectors/docs/draft-strategies.md).

Pitfalls handled: a lower-bound energy is written "≥ 123", never as a value; a batch without a
trustworthy pair shows its ratios in parentheses (shown, not used) and says why, a speed-up
whose arms' points count (a sweep without a meter) is shown plain; the crossover
and the recommendation come from the summary, where one rule made both (`rule.judge`), so every
rendering (CLI, report, Markdown, dashboard) says the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.fmt import MISSING, num, pct
from collectors.sweep.records import ArmEntry, ArmFigures, ArmsSummary, BatchPair, PairedSummary, RatePair
from collectors.sweep.rule import Verdict
from collectors.sweep.store import to_csv


@dataclass(frozen=True, slots=True)
class AtLeast:
    """A lower bound: the meter did not cover the window."""

    value: float


@dataclass(frozen=True, slots=True)
class Unused:
    """A figure of a batch without a trustworthy pair: shown, not used."""

    value: float


def _energy(value: float | None, at_least: float | None) -> float | AtLeast | None:
    if value is not None:
        return value
    return AtLeast(at_least) if at_least is not None else None


def _mj(arm: ArmFigures) -> float | AtLeast | None:
    return _energy(arm.mj_per_token, arm.mj_per_token_at_least)


def _w(arm: ArmFigures) -> float | AtLeast | None:
    return _energy(arm.power_w, arm.power_w_at_least)


def _marked(value: float | None, trusted: bool) -> float | Unused | None:
    return Unused(value) if value is not None and not trusted else value


VERDICT_WORDS = {Verdict.SAVES: "saves", Verdict.EVEN: "break-even", Verdict.COSTS: "costs"}

Column = tuple[str, Callable[[BatchPair], Any], str]
ArmsColumn = tuple[str, Callable[[ArmEntry], Any], str]

# note 25's table (collectors/docs/note25.md), in its order
MAIN_COLUMNS: list[Column] = [
    ("requests", lambda t: t.batch, "d"),
    ("plain tok/s", lambda t: t.plain.tok_s, ".1f"),
    ("draft tok/s", lambda t: t.draft.tok_s, ".1f"),
    # both arms' points count for speed even where no energy was measured (no meter)
    ("speed", lambda t: _marked(t.speedup, t.plain.trusted and t.draft.trusted), ".2fx"),
    ("plain mJ/token", lambda t: _mj(t.plain), ".0f"),
    ("draft mJ/token", lambda t: _mj(t.draft), ".0f"),
    ("energy", lambda t: _marked(t.energy_ratio, t.trusted), ".2fx"),
    ("plain W", lambda t: _w(t.plain), ".1f"),
    ("draft W", lambda t: _w(t.draft), ".1f"),
    ("acceptance", lambda t: t.draft.acceptance, "%"),
]
# what the ledger adds (collectors/docs/energy-ledger.md): committed advance, width, net of idle, latency tails (pooled over the
# points), the rule's reading of the batch, and the flags
DETAIL_COLUMNS: list[Column] = [
    ("requests", lambda t: t.batch, "d"),
    ("G", lambda t: t.draft.mean_advance, ".2f"),
    ("width", lambda t: t.draft.verified_width, ".2f"),
    ("plain net mJ/tok", lambda t: t.plain.net_mj_per_token, ".0f"),
    ("draft net mJ/tok", lambda t: t.draft.net_mj_per_token, ".0f"),
    ("net energy", lambda t: _marked(t.net_energy_ratio, t.trusted), ".2fx"),
    ("TTFT ms p/d", lambda t: _pair(t.plain.ttft_ms_p50, t.draft.ttft_ms_p50, ".0f"), "s"),
    ("gap p95 ms p/d", lambda t: _pair(t.plain.chunk_gap_ms_p95, t.draft.chunk_gap_ms_p95, ".1f"), "s"),
    ("gap p99 ms p/d", lambda t: _pair(t.plain.chunk_gap_ms_p99, t.draft.chunk_gap_ms_p99, ".1f"), "s"),
    ("verdict", lambda t: VERDICT_WORDS[t.verdict] if t.verdict else "not used", "s"),
    ("flags", lambda t: ",".join(_flags(t)), "s"),
]
COLUMNS = MAIN_COLUMNS + DETAIL_COLUMNS[1:]

# seed 001's table, then what the ledger adds: committed advance G, verified width, chip W
ARMS_COLUMNS: list[ArmsColumn] = [
    ("class", lambda t: t.prompt_class, "s"),
    ("requests", lambda t: t.batch, "d"),
    ("arm", lambda t: t.arm, "s"),
    ("tok/s", lambda t: t.figures.tok_s, ".1f"),
    ("acceptance", lambda t: t.figures.acceptance, "%"),
    ("mJ/token", lambda t: _mj(t.figures), ".1f"),
    ("vs plain", lambda t: _marked(t.energy_ratio, t.figures.trusted), ".2fx"),
    ("speed", lambda t: _marked(t.speedup, t.figures.trusted), ".2fx"),
    ("G", lambda t: t.figures.mean_advance, ".2f"),
    ("width", lambda t: t.figures.verified_width, ".2f"),
    ("W", lambda t: _w(t.figures), ".1f"),
    ("verdict", lambda t: VERDICT_WORDS[t.verdict] if t.verdict else "", "s"),
    ("flags", lambda t: ",".join(t.figures.flags), "s"),
]


def _flags(t: BatchPair | RatePair) -> list[str]:
    return sorted(set(t.plain.flags) | set(t.draft.flags))


def arms_cells(record: ArmsSummary) -> tuple[list[str], list[list[str]]]:
    assert isinstance(record, ArmsSummary)
    header = [name for name, _, _ in ARMS_COLUMNS]
    return header, [[cell(get(t), spec) for _, get, spec in ARMS_COLUMNS] for t in record.rows]


def _pair(a: float | None, b: float | None, spec: str) -> str:
    return f"{cell(a, spec)}/{cell(b, spec)}"


def cell(value: Any, spec: str) -> str:
    """One table cell: `%` a percentage, a trailing `x` a ratio, `s` text as is, else a format spec."""
    if isinstance(value, AtLeast):
        return "≥ " + cell(value.value, spec)
    if isinstance(value, Unused):
        return f"({cell(value.value, spec)})"
    if spec == "s":
        return "" if value is None else str(value)
    if value is None or value == "":
        return MISSING
    if spec == "%":
        return pct(value)
    if spec.endswith("x"):
        return num(value, spec[:-1], "x")
    return num(value, spec)


def table_cells(
    record: PairedSummary, columns: Sequence[Column] = COLUMNS
) -> tuple[list[str], list[list[str]]]:
    assert isinstance(record, PairedSummary)
    header = [name for name, _, _ in columns]
    return header, [[cell(get(t), spec) for _, get, spec in columns] for t in record.rows]


PAIRED_CSV_HEADER = [
    "batch",
    "plain_tok_s",
    "draft_tok_s",
    "speedup",
    "plain_mj_per_token",
    "draft_mj_per_token",
    "energy_ratio",
    "plain_power_w",
    "draft_power_w",
    "acceptance",
    "mean_advance",
    "verified_width",
    "plain_net_mj_per_token",
    "draft_net_mj_per_token",
    "plain_ttft_ms_p50",
    "draft_ttft_ms_p50",
    "draft_chunk_gap_ms_p95",
    "draft_chunk_gap_ms_p99",
    "flags",
    "trusted",
    "verdict",
]


def to_table_csv(record: PairedSummary | ArmsSummary) -> str:
    """Machine-friendly CSV: raw numbers, not formatted cells; lower bounds are left empty."""
    if isinstance(record, ArmsSummary):
        return _arms_csv(record)
    if record.open_loop is not None:  # a column says which load each row came from
        closed: list[list[Any]] = [["closed", "", "", "", "", *_paired_row(t, t.batch)] for t in record.rows]
        opened = [
            ["open", t.rate_rps, t.arrivals, *_in_flight_means(t), *_paired_row(t, None)]
            for t in record.open_loop.rows
        ]
        return to_csv(OPEN_LOOP_CSV_HEADER + PAIRED_CSV_HEADER, closed + opened)
    return to_csv(PAIRED_CSV_HEADER, [_paired_row(t, t.batch) for t in record.rows])


OPEN_LOOP_CSV_HEADER = ["load", "rate_rps", "arrivals", "plain_in_flight_mean", "draft_in_flight_mean"]


def _in_flight_means(t: RatePair) -> list[float | None]:
    return [f.mean if f else None for f in (t.plain_in_flight, t.draft_in_flight)]


def _paired_row(t: BatchPair | RatePair, batch: int | None) -> list[Any]:
    """A closed-loop batch's or an open-loop rate's figures, as summary.csv's paired columns."""
    p, d = t.plain, t.draft
    return [
        batch,
        p.tok_s,
        d.tok_s,
        t.speedup,
        p.mj_per_token,
        d.mj_per_token,
        t.energy_ratio,
        p.power_w,
        d.power_w,
        d.acceptance,
        d.mean_advance,
        d.verified_width,
        p.net_mj_per_token,
        d.net_mj_per_token,
        p.ttft_ms_p50,
        d.ttft_ms_p50,
        d.chunk_gap_ms_p95,
        d.chunk_gap_ms_p99,
        ";".join(_flags(t)),
        int(t.trusted),
        t.verdict.value if t.verdict else "",
    ]


ARMS_CSV_HEADER = [
    "prompt_class",
    "batch",
    "arm",
    "tok_s",
    "acceptance",
    "mj_per_token",
    "energy_ratio",
    "speedup",
    "mean_advance",
    "verified_width",
    "power_w",
    "net_mj_per_token",
    "flags",
    "trusted",
    "verdict",
]


def _arms_csv(summary: ArmsSummary) -> str:
    """Raw numbers, a row per class, batch and arm; lower bounds are left empty."""
    out = [
        [
            t.prompt_class,
            t.batch,
            t.arm,
            t.figures.tok_s,
            t.figures.acceptance,
            t.figures.mj_per_token,
            t.energy_ratio,
            t.speedup,
            t.figures.mean_advance,
            t.figures.verified_width,
            t.figures.power_w,
            t.figures.net_mj_per_token,
            ";".join(t.figures.flags),
            int(t.figures.trusted),
            t.verdict.value if t.verdict else "",
        ]
        for t in summary.rows
    ]
    return to_csv(ARMS_CSV_HEADER, out)
