"""The sweep's summary: note 25's table plus G, width, tails, net energy, the crossover and a verdict.

Every figure is a ratio of totals over all points of an arm at a batch (Eq. 3, 14): joules and
tokens are summed over passes (and plain before/after) before dividing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from collectors.fmt import MISSING, num, pct
from collectors.sweep.store import RunStore, load_run, to_csv

SUMMARY_SCHEMA = "spectop.summary/1"
EVEN_BAND = 0.05  # energy ratios within 5 % of 1 are break-even (note 25's pass spreads reach 8 %)
Row = Mapping[str, Any]


def _sum(rows: Iterable[Row], key: str) -> float | None:
    values = [r.get(key) for r in rows]
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None))


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _max(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def aggregate(rows: Sequence[Row]) -> dict[str, Any]:
    """One arm at one batch, over all its points."""
    energy_j, net_j = _sum(rows, "energy_j"), _sum(rows, "net_energy_j")
    tokens, duration_s = _sum(rows, "committed_tokens") or 0.0, _sum(rows, "window_s") or 0.0
    drafted, accepted, steps = (_sum(rows, k) or 0.0 for k in ("drafted", "accepted", "steps"))
    return {
        "points": len(rows),
        "tokens": int(tokens),
        "duration_s": duration_s,
        "energy_j": energy_j,
        "tok_s": tokens / duration_s if duration_s else None,
        "power_w": energy_j / duration_s if energy_j is not None and duration_s else None,
        "mj_per_token": 1000 * energy_j / tokens if energy_j is not None and tokens else None,
        "net_mj_per_token": 1000 * net_j / tokens if net_j is not None and tokens else None,
        "acceptance": accepted / drafted if drafted else None,
        "mean_advance": 1 + accepted / steps if steps else None,
        "verified_width": 1 + drafted / steps if steps else None,
        "concurrency_mean": _median(r.get("concurrency_mean") for r in rows),
        "ttft_ms_p50": _median(r.get("ttft_ms_p50") for r in rows),
        "chunk_gap_ms_p95": _median(r.get("chunk_gap_ms_p95") for r in rows),
        "chunk_gap_ms_p99": _max(r.get("chunk_gap_ms_p99") for r in rows),
        "flags": sorted({f["code"] for r in rows for f in r.get("flags", [])}),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def interpolate(points: Iterable[tuple[float, float]], x: float) -> float | None:
    """Linear between (x, y) points, clamped at the ends (numpy.interp); None without points."""
    ordered = sorted(points)
    if not ordered:
        return None
    return float(np.interp(x, [p[0] for p in ordered], [p[1] for p in ordered]))


def at_batch(points: Iterable[tuple[float, float]], batch: float) -> float | None:
    """A per-batch figure between measured batches: linear in log B, clamped at the ends."""
    return interpolate([(math.log(b), v) for b, v in points], math.log(batch))


def crossover(ratios: Sequence[tuple[int, float]]) -> dict[str, Any] | None:
    """Where the energy ratio first crosses 1 going up, interpolated in log B."""
    for (b0, r0), (b1, r1) in zip(ratios, ratios[1:]):
        if r0 < 1.0 <= r1:
            # the same line as at_batch, read the other way: log B against the ratio
            log_at = interpolate([(r0, math.log(b0)), (r1, math.log(b1))], 1.0)
            assert log_at is not None  # two points always interpolate
            return {"below": b0, "above": b1, "batch": round(math.exp(log_at), 2)}
    return None


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def recommend(ratios: Sequence[tuple[int, float]], even_band: float = EVEN_BAND) -> str:
    """One line a person can act on.

    A ratio within `even_band` of 1 is break-even: drafting then costs no energy to speak of and
    still buys speed, so it counts as worth drafting (note 25 at one request: 1.03x, 1.26x faster).
    """
    if not ratios:
        return "no valid paired points: nothing to recommend"
    worth = [b for b, r in ratios if r <= 1.0 + even_band]
    costs = [b for b, r in ratios if r > 1.0 + even_band]
    span = f"{ratios[0][0]}–{ratios[-1][0]}" if len(ratios) > 1 else f"{ratios[0][0]}"
    if not costs:
        verb = (
            "saves energy" if all(r < 1.0 - even_band for _, r in ratios) else "saves energy or breaks even"
        )
        return f"drafting {verb} at every measured batch ({span} concurrent requests): keep it on"
    if not worth:
        return f"drafting costs energy at every measured batch ({span} concurrent requests): turn it off"
    if max(worth) < min(costs):
        return f"draft at ≤ {_requests(max(worth))}, turn it off from {min(costs)}"
    if max(costs) < min(worth):
        return f"drafting costs energy up to {_requests(max(costs))} and pays from {min(worth)}"
    return (
        f"drafting pays at {', '.join(map(str, worth))} and costs at {', '.join(map(str, costs))} "
        "concurrent requests: no clean crossover, re-run with more passes"
    )


def summarize(rows: Sequence[Row], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The summary of all points so far (a cancelled sweep summarizes what it has)."""
    by_batch: dict[int, dict[str, list[Row]]] = {}
    for row in rows:
        by_batch.setdefault(int(row["batch"]), {}).setdefault(row["arm"], []).append(row)
    table, ratios = [], []
    for batch in sorted(by_batch):
        plain = aggregate(by_batch[batch].get("plain", []))
        draft = aggregate(by_batch[batch].get("draft", []))
        energy_ratio = _ratio(draft["mj_per_token"], plain["mj_per_token"])
        void = "void" in draft["flags"]
        table.append(
            {
                "batch": batch,
                "plain": plain,
                "draft": draft,
                "speedup": _ratio(draft["tok_s"], plain["tok_s"]),
                "energy_ratio": energy_ratio,
                "net_energy_ratio": _ratio(draft["net_mj_per_token"], plain["net_mj_per_token"]),
                "power_ratio": _ratio(draft["power_w"], plain["power_w"]),
                "void": void,
            }
        )
        if energy_ratio is not None and not void and plain["points"] and draft["points"]:
            ratios.append((batch, energy_ratio))
    return {
        "schema": SUMMARY_SCHEMA,
        "points": len(rows),
        "planned_points": (meta or {}).get("planned_points"),
        "idle_w": (meta or {}).get("idle_w")
        or next((r.get("idle_w") for r in rows if r.get("idle_w") is not None), None),
        "rows": table,
        "crossover": crossover(ratios),
        "recommendation": recommend(ratios),
        "flags": sorted({f["code"] for r in rows for f in r.get("flags", [])}),
    }


# note 25's table, in its order
MAIN_COLUMNS = [
    ("requests", lambda t: t["batch"], "d"),
    ("plain tok/s", lambda t: t["plain"]["tok_s"], ".1f"),
    ("draft tok/s", lambda t: t["draft"]["tok_s"], ".1f"),
    ("speed", lambda t: t["speedup"], ".2fx"),
    ("plain mJ/token", lambda t: t["plain"]["mj_per_token"], ".0f"),
    ("draft mJ/token", lambda t: t["draft"]["mj_per_token"], ".0f"),
    ("energy", lambda t: t["energy_ratio"], ".2fx"),
    ("plain W", lambda t: t["plain"]["power_w"], ".1f"),
    ("draft W", lambda t: t["draft"]["power_w"], ".1f"),
    ("acceptance", lambda t: t["draft"]["acceptance"], "%"),
]
# what the seeds add: committed advance, width, net of idle, latency tails, and the flags
DETAIL_COLUMNS = [
    ("requests", lambda t: t["batch"], "d"),
    ("G", lambda t: t["draft"]["mean_advance"], ".2f"),
    ("width", lambda t: t["draft"]["verified_width"], ".2f"),
    ("plain net mJ/tok", lambda t: t["plain"]["net_mj_per_token"], ".0f"),
    ("draft net mJ/tok", lambda t: t["draft"]["net_mj_per_token"], ".0f"),
    ("net energy", lambda t: t["net_energy_ratio"], ".2fx"),
    ("TTFT ms p/d", lambda t: _pair(t["plain"]["ttft_ms_p50"], t["draft"]["ttft_ms_p50"], ".0f"), "s"),
    (
        "gap p95 ms p/d",
        lambda t: _pair(t["plain"]["chunk_gap_ms_p95"], t["draft"]["chunk_gap_ms_p95"], ".1f"),
        "s",
    ),
    (
        "gap p99 ms p/d",
        lambda t: _pair(t["plain"]["chunk_gap_ms_p99"], t["draft"]["chunk_gap_ms_p99"], ".1f"),
        "s",
    ),
    ("flags", lambda t: ",".join(sorted(set(t["plain"]["flags"]) | set(t["draft"]["flags"]))), "s"),
]
COLUMNS = MAIN_COLUMNS + DETAIL_COLUMNS[1:]


def _pair(a: float | None, b: float | None, spec: str) -> str:
    return f"{cell(a, spec)}/{cell(b, spec)}"


def cell(value: Any, spec: str) -> str:
    """One table cell: `%` a percentage, a trailing `x` a ratio, `s` text as is, else a format spec."""
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
    summary: Mapping[str, Any], columns: Sequence[tuple[str, Any, str]] = COLUMNS
) -> tuple[list[str], list[list[str]]]:
    header = [name for name, _, _ in columns]
    return header, [[cell(get(t), spec) for _, get, spec in columns] for t in summary["rows"]]


def to_markdown(summary: Mapping[str, Any]) -> str:
    header, rows = table_cells(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    cross = summary["crossover"]
    lines.append("")
    if cross:
        lines.append(
            f"Energy crossover between {cross['below']} and {cross['above']} concurrent requests "
            f"(≈ {cross['batch']:g})."
        )
    lines.append(f"Recommendation: {summary['recommendation']}.")
    if summary.get("idle_w") is not None:
        lines.append(f"Idle power {summary['idle_w']:.1f} W; net energy subtracts it over each window.")
    return "\n".join(lines) + "\n"


def to_table_csv(summary: Mapping[str, Any]) -> str:
    """Machine-friendly CSV: raw numbers, not formatted cells."""
    header = [
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
    ]
    out = []
    for t in summary["rows"]:
        p, d = t["plain"], t["draft"]
        out.append(
            [
                t["batch"],
                p["tok_s"],
                d["tok_s"],
                t["speedup"],
                p["mj_per_token"],
                d["mj_per_token"],
                t["energy_ratio"],
                p["power_w"],
                d["power_w"],
                d["acceptance"],
                d["mean_advance"],
                d["verified_width"],
                p["net_mj_per_token"],
                d["net_mj_per_token"],
                p["ttft_ms_p50"],
                d["ttft_ms_p50"],
                d["chunk_gap_ms_p95"],
                d["chunk_gap_ms_p99"],
                ";".join(sorted(set(p["flags"]) | set(d["flags"]))),
            ]
        )
    return to_csv(header, out)


def rewrite_summary(run_dir: Path) -> dict[str, Any]:
    """Summarize a run from its files (a sweep cut short outside the engine) and save the summaries."""
    meta, rows = load_run(run_dir)
    summary = summarize(rows, meta)
    RunStore(run_dir).write_summary(summary, to_table_csv(summary), to_markdown(summary))
    return summary
