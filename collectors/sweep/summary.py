"""The sweep's summary: note 25's table (collectors/docs/note25.md) plus G, width, tails, net energy, the crossover and a verdict.

Every figure is a ratio of totals over the points of an arm at a batch (Eq. 3, 14): joules,
tokens and seconds are summed over passes (and plain before/after) before dividing. Pitfalls
handled: only trustworthy points (`checks.EXCLUDING`) feed the ratios, the crossover and the
recommendation; an arm with none is still shown, from all its points, and marked untrusted.
Energy the meter did not cover is a lower bound: it never becomes W, mJ/token or a ratio, only
"at least". W divides by the seconds the energy was measured over (`energy_window_s`), not by the
request window. Latency tails are percentiles of all the points' samples pooled, not a median or
a maximum of per-point percentiles; rows saved without their samples leave the gap tails blank.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from collectors.energy import ledger
from collectors.sweep import checks
from collectors.sweep.rule import EVEN_BAND, at_batch, classify, interpolate, judge
from collectors.sweep.store import RunStore, load_run
from collectors.sweep.tables import MAIN_COLUMNS, table_cells, to_markdown, to_table_csv

SUMMARY_SCHEMA = "spectop.summary/2"  # /2: crossover at the break-even band's edge; trust per batch
__all__ = [  # the live verdict and the sweep panel read these from here
    "MAIN_COLUMNS",
    "SUMMARY_SCHEMA",
    "aggregate",
    "at_batch",
    "interpolate",
    "rewrite_summary",
    "summarize",
    "table_cells",
]
Row = Mapping[str, Any]


def _sum(rows: Iterable[Row], key: str) -> float | None:
    values = [r.get(key) for r in rows]
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None))


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


def _pooled(samples: list[float] | None, q: float) -> float | None:
    return float(np.percentile(samples, q)) if samples else None


def _gaps(rows: Sequence[Row]) -> list[float] | None:
    """Every chunk gap of the points, or None when a point did not keep its samples (older runs)."""
    if any(r.get("chunk_gaps_ms") is None for r in rows):
        return None
    return [g for r in rows for g in r["chunk_gaps_ms"]]


def aggregate(rows: Sequence[Row], trusted: bool = True) -> dict[str, Any]:
    """One arm at one batch, over `rows`; `trusted` says whether they are trustworthy points only."""
    measured_j = _sum(rows, "energy_j")
    covered = all(r.get("energy_covered", True) for r in rows)
    energy_j = measured_j if covered else None  # a lower bound is not a value
    at_least_j = measured_j if not covered else None
    net_j = _sum(rows, "net_energy_j") if covered else None
    tokens, duration_s = _sum(rows, "committed_tokens") or 0.0, _sum(rows, "window_s") or 0.0
    # the seconds the meter measured over (rows saved before this was recorded: the request window)
    energy_s = sum(r.get("energy_window_s", r["window_s"]) for r in rows)
    # unknown counts (a point whose drafting the server did not report) stay unknown, never 0
    drafted, accepted, steps = (_sum(rows, k) for k in ("drafted", "accepted", "steps"))
    gaps = _gaps(rows)
    return {
        "points": len(rows),
        "trusted": trusted and bool(rows),
        "tokens": int(tokens),
        "duration_s": duration_s,
        "energy_s": energy_s,
        "energy_j": energy_j,
        "energy_j_at_least": at_least_j,
        "tok_s": tokens / duration_s if duration_s else None,
        "power_w": energy_j / energy_s if energy_j is not None and energy_s else None,
        "power_w_at_least": at_least_j / energy_s if at_least_j is not None and energy_s else None,
        "mj_per_token": _mj(energy_j, tokens),
        "mj_per_token_at_least": _mj(at_least_j, tokens),
        "net_mj_per_token": _mj(net_j, tokens),
        "acceptance": _known(ledger.acceptance, drafted, accepted),
        "mean_advance": _known(ledger.mean_committed_advance, accepted, steps),
        "verified_width": _known(ledger.mean_verified_width, drafted, steps),
        "concurrency_mean": _median(r.get("concurrency_mean") for r in rows),
        "ttft_ms_p50": _pooled(
            [q["ttft_ms"] for r in rows for q in r.get("requests", []) if q.get("ttft_ms") is not None], 50
        ),
        "chunk_gap_ms_p95": _pooled(gaps, 95),
        "chunk_gap_ms_p99": _pooled(gaps, 99),
        "flags": sorted({f["code"] for r in rows for f in r.get("flags", [])}),
    }


def _arm(rows: Sequence[Row], excluded: Sequence[tuple[str, ...]]) -> dict[str, Any]:
    """The arm's trustworthy points when it has any; else all of them, marked untrusted."""
    kept = [r for r, codes in zip(rows, excluded) if not codes]
    return aggregate(kept) if kept else aggregate(rows, trusted=False)


def _batch_row(batch: int, rows: Sequence[Row], excluded: Sequence[tuple[str, ...]]) -> dict[str, Any]:
    arms = {
        arm: _arm(
            [r for r in rows if r["arm"] == arm], [c for r, c in zip(rows, excluded) if r["arm"] == arm]
        )
        for arm in ("plain", "draft")
    }
    plain, draft = arms["plain"], arms["draft"]
    energy_ratio = ledger.draft_over_plain(draft["mj_per_token"], plain["mj_per_token"])
    trusted = plain["trusted"] and draft["trusted"] and energy_ratio is not None
    reasons = sorted({code for codes in excluded for code in codes})
    missing = [f"no {arm} point" for arm in ("plain", "draft") if not arms[arm]["points"]]
    draft_flags = {f["code"] for r in rows if r["arm"] == "draft" for f in r.get("flags", [])}
    return {
        "batch": batch,
        "plain": plain,
        "draft": draft,
        "speedup": ledger.draft_over_plain(draft["tok_s"], plain["tok_s"]),
        "energy_ratio": energy_ratio,
        "net_energy_ratio": ledger.draft_over_plain(draft["net_mj_per_token"], plain["net_mj_per_token"]),
        "power_ratio": ledger.draft_over_plain(draft["power_w"], plain["power_w"]),
        "void": "void" in draft_flags,
        "trusted": trusted,
        "verdict": classify(energy_ratio) if trusted and energy_ratio is not None else None,
        "excluded_points": sum(1 for codes in excluded if codes),
        "excluded": reasons,
        # why this batch has no pair the verdict may use
        "untrusted_because": [] if trusted else (reasons + missing) or ["no energy measured"],
    }


def summarize(rows: Sequence[Row], meta: Row | None = None) -> dict[str, Any]:
    """The summary of all points so far (a cancelled sweep summarizes what it has)."""
    excluded = checks.exclusions(rows)
    by_batch: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_batch.setdefault(int(row["batch"]), []).append(i)
    table = [
        _batch_row(b, [rows[i] for i in by_batch[b]], [excluded[i] for i in by_batch[b]])
        for b in sorted(by_batch)
    ]
    ratios = [(t["batch"], t["energy_ratio"]) for t in table if t["trusted"]]
    verdict = judge(ratios)
    recommendation = verdict.recommendation
    untrusted = [{"batch": t["batch"], "because": t["untrusted_because"]} for t in table if not t["trusted"]]
    if not ratios and untrusted:
        reasons = sorted({why for u in untrusted for why in u["because"]})
        recommendation += f" (every batch lacks a trustworthy pair: {', '.join(reasons)})"
    meta = meta or {}
    idle_flag = meta.get("idle_flag") or next((r["idle_flag"] for r in rows if r.get("idle_flag")), None)
    return {
        "schema": SUMMARY_SCHEMA,
        "points": len(rows),
        "planned_points": meta.get("planned_points"),
        "idle_w": meta.get("idle_w")
        or next((r.get("idle_w") for r in rows if r.get("idle_w") is not None), None),
        "idle_flag": idle_flag,
        "rows": table,
        "rule": {"even_band": EVEN_BAND, "excluding_flags": sorted(checks.EXCLUDING)},
        "crossover": verdict.crossover,
        "recommendation": recommendation,
        "untrusted": untrusted,
        "flags": sorted({f["code"] for r in rows for f in r.get("flags", [])}),
    }


def rewrite_summary(run_dir: Path) -> dict[str, Any]:
    """Summarize a run from its files (a sweep cut short, or saved by an older spectop) and save it."""
    meta, rows = load_run(run_dir)
    summary = summarize(rows, meta)
    RunStore(run_dir).write_summary(summary, to_table_csv(summary), to_markdown(summary))
    return summary


def _mj(energy_j: float | None, tokens: float) -> float | None:
    return ledger.mj_per_token(energy_j, int(tokens)) if energy_j is not None else None


def _known(ratio: Callable[[int, int], float | None], a: float | None, b: float | None) -> float | None:
    """A ledger ratio of two summed counts, or None when either count is unknown."""
    return None if a is None or b is None else ratio(int(a), int(b))
