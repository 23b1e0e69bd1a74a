"""How a multi-arm sweep's summary is written: seed 001's table per class (collectors/docs/draft-strategies.md),
Markdown, CSV and the verdict sentences, shared by the CLI, `report` and the run's files.

Pitfalls handled: the same cell rules as the paired sweep's table (tables.cell): a lower-bound
energy is "≥ …", a figure without a trustworthy pair is in parentheses (shown, not used); a failed
arm is named with its reason; the best arms, the 60 % line and the settings all come from the
summary, so every rendering says the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.sweep.store import to_csv
from collectors.sweep.tables import VERDICT_WORDS, _energy, _marked, cell

Summary = Mapping[str, Any]

# seed 001's table, then what the ledger adds: committed advance G, verified width, chip W
ARMS_COLUMNS = [
    ("class", lambda t: t["prompt_class"], "s"),
    ("requests", lambda t: t["batch"], "d"),
    ("arm", lambda t: t["arm"], "s"),
    ("tok/s", lambda t: t["tok_s"], ".1f"),
    ("acceptance", lambda t: t["acceptance"], "%"),
    ("mJ/token", lambda t: _energy(t, "mj_per_token"), ".1f"),
    ("vs plain", lambda t: _marked(t, "energy_ratio"), ".2fx"),
    ("speed", lambda t: _marked(t, "speedup"), ".2fx"),
    ("G", lambda t: t["mean_advance"], ".2f"),
    ("width", lambda t: t["verified_width"], ".2f"),
    ("W", lambda t: _energy(t, "power_w"), ".1f"),
    ("verdict", lambda t: VERDICT_WORDS[t["verdict"]] if t.get("verdict") else "", "s"),
    ("flags", lambda t: ",".join(t["flags"]), "s"),
]


def arms_cells(summary: Summary) -> tuple[list[str], list[list[str]]]:
    header = [name for name, _, _ in ARMS_COLUMNS]
    return header, [[cell(get(t), spec) for _, get, spec in ARMS_COLUMNS] for t in summary["rows"]]


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def arms_sentences(summary: Summary) -> list[str]:
    """Per class (and batch): the best arm by energy and by speed, the 60 % line, width advice, settings."""
    lines = []
    line_pct = round(100 * summary["rule"]["acceptance_line"])
    for v in summary["verdicts"]:
        where = f"{v['prompt_class']} at {_requests(v['batch'])}"
        if not v["plain_trusted"]:
            lines.append(f"{where}: no trustworthy plain point, so no arm is compared.")
            continue
        if v["differ"]:
            lines.append(
                f"{where}: best by energy {v['best_energy']}, by speed {v['best_speed']} "
                "(they differ: the faster arm costs more energy per token)."
            )
        else:
            lines.append(f"{where}: best by energy and by speed {v['best_energy']}.")
        below = v["below_line"]
        if below:
            arms = ", ".join(f"{b['arm']} {cell(b['acceptance'], '%')}" for b in below)
            verdict = "every one cost energy" if v["below_line_all_cost"] else "not every one cost energy"
            lines.append(f"  Below {line_pct} % acceptance ({arms}): {verdict}.")
        lines += [f"  Width: {advice}." for advice in v["width_advice"]]
        lines += [f"  Setting: {setting}" for setting in v["settings"]]
    for off in summary.get("turn_off", []):
        lines.append(
            f"{off['prompt_class']}: drafting pays up to {_requests(off['batch'])}. Setting: {off['setting']}"
        )
    for w in summary.get("void_waived", []):
        why = "n-gram copying found nothing to copy there" if w["ngram"] else "it drafted nothing there"
        lines.append(
            f"{w['arm']} on {w['prompt_class']}: {why}, but it drafts on {', '.join(w['drafts_on'])}, "
            "so that point measures its plain decoding and counts (not a void arm)."
        )
    for arm, why in summary.get("failed_arms", {}).items():
        lines.append(f"Arm {arm} failed, its points after that left out: {why}")
    if summary.get("idle_w") is not None:
        lines.append(f"Idle power {summary['idle_w']:.1f} W.")
    elif summary.get("idle_flag"):
        lines.append(f"Idle power not used: {summary['idle_flag']['message']}.")
    return lines


def to_arms_markdown(summary: Summary) -> str:
    header, rows = arms_cells(summary)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines.append("")
    lines += arms_sentences(summary)
    return "\n".join(lines) + "\n"


CSV_HEADER = [
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


def to_arms_csv(summary: Summary) -> str:
    """Raw numbers, a row per class, batch and arm; lower bounds are left empty."""
    out = [
        [
            t["prompt_class"],
            t["batch"],
            t["arm"],
            t["tok_s"],
            t["acceptance"],
            t["mj_per_token"],
            t["energy_ratio"],
            t["speedup"],
            t["mean_advance"],
            t["verified_width"],
            t["power_w"],
            t["net_mj_per_token"],
            ";".join(t["flags"]),
            int(t["trusted"]),
            t["verdict"] or "",
        ]
        for t in summary["rows"]
    ]
    return to_csv(CSV_HEADER, out)
