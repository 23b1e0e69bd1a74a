"""How a sweep summary is written for people and tools: table cells, Markdown, CSV, verdict lines.

Pitfalls handled: a lower-bound energy is written "≥ 123", never as a value; a batch without a
trustworthy pair shows its ratios in parentheses (shown, not used) and says why; the crossover
and the recommendation come from the summary, where one rule made both (`rule.judge`), so every
rendering (CLI, report, Markdown, dashboard) says the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.fmt import MISSING, num, pct
from collectors.sweep.rule import Verdict
from collectors.sweep.store import to_csv

Summary = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AtLeast:
    """A lower bound: the meter did not cover the window."""

    value: float


@dataclass(frozen=True, slots=True)
class Unused:
    """A figure of a batch without a trustworthy pair: shown, not used."""

    value: float


def _energy(arm: Mapping[str, Any], key: str) -> float | AtLeast | None:
    if arm[key] is not None:
        return arm[key]
    bound = arm.get(f"{key}_at_least")
    return AtLeast(bound) if bound is not None else None


def _marked(t: Mapping[str, Any], key: str) -> float | Unused | None:
    value = t[key]
    return Unused(value) if value is not None and not t.get("trusted", True) else value


VERDICT_WORDS = {Verdict.SAVES: "saves", Verdict.EVEN: "break-even", Verdict.COSTS: "costs"}

# note 25's table (collectors/docs/note25.md), in its order
MAIN_COLUMNS = [
    ("requests", lambda t: t["batch"], "d"),
    ("plain tok/s", lambda t: t["plain"]["tok_s"], ".1f"),
    ("draft tok/s", lambda t: t["draft"]["tok_s"], ".1f"),
    ("speed", lambda t: _marked(t, "speedup"), ".2fx"),
    ("plain mJ/token", lambda t: _energy(t["plain"], "mj_per_token"), ".0f"),
    ("draft mJ/token", lambda t: _energy(t["draft"], "mj_per_token"), ".0f"),
    ("energy", lambda t: _marked(t, "energy_ratio"), ".2fx"),
    ("plain W", lambda t: _energy(t["plain"], "power_w"), ".1f"),
    ("draft W", lambda t: _energy(t["draft"], "power_w"), ".1f"),
    ("acceptance", lambda t: t["draft"]["acceptance"], "%"),
]
# what the ledger adds (collectors/docs/energy-ledger.md): committed advance, width, net of idle, latency tails (pooled over the
# points), the rule's reading of the batch, and the flags
DETAIL_COLUMNS = [
    ("requests", lambda t: t["batch"], "d"),
    ("G", lambda t: t["draft"]["mean_advance"], ".2f"),
    ("width", lambda t: t["draft"]["verified_width"], ".2f"),
    ("plain net mJ/tok", lambda t: t["plain"]["net_mj_per_token"], ".0f"),
    ("draft net mJ/tok", lambda t: t["draft"]["net_mj_per_token"], ".0f"),
    ("net energy", lambda t: _marked(t, "net_energy_ratio"), ".2fx"),
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
    ("verdict", lambda t: VERDICT_WORDS[t["verdict"]] if t.get("verdict") else "not used", "s"),
    ("flags", lambda t: ",".join(sorted(set(t["plain"]["flags"]) | set(t["draft"]["flags"]))), "s"),
]
COLUMNS = MAIN_COLUMNS + DETAIL_COLUMNS[1:]


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
    summary: Summary, columns: Sequence[tuple[str, Any, str]] = COLUMNS
) -> tuple[list[str], list[list[str]]]:
    header = [name for name, _, _ in columns]
    return header, [[cell(get(t), spec) for _, get, spec in columns] for t in summary["rows"]]


def verdict_sentences(summary: Summary) -> list[str]:
    """The crossover, the recommendation, the batches left out and the idle baseline, as sentences."""
    lines = []
    cross = summary.get("crossover")
    if cross:
        lines.append(
            f"Energy crossover between {cross['below']} and {cross['above']} concurrent requests "
            f"(≈ {cross['batch']:g}, where the energy ratio rises through {cross['ratio']:g})."
        )
    lines.append(f"Recommendation: {summary['recommendation']}.")
    for u in summary.get("untrusted", []):
        lines.append(
            f"No trustworthy pair at B={u['batch']}: {', '.join(u['because'])} "
            "(its ratios are shown in parentheses, not used)."
        )
    if summary.get("idle_w") is not None:
        lines.append(f"Idle power {summary['idle_w']:.1f} W; net energy subtracts it over each window.")
    elif summary.get("idle_flag"):
        lines.append(f"Idle power not used: {summary['idle_flag']['message']}.")
    return lines


def to_markdown(summary: Summary) -> str:
    header, rows = table_cells(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines.append("")
    lines += verdict_sentences(summary)
    return "\n".join(lines) + "\n"


CSV_HEADER = [
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


def to_table_csv(summary: Summary) -> str:
    """Machine-friendly CSV: raw numbers, not formatted cells; lower bounds are left empty."""
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
                int(t["trusted"]),
                t["verdict"] or "",
            ]
        )
    return to_csv(CSV_HEADER, out)
