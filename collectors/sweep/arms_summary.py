"""The multi-arm sweep's summary: seed 001's table per class (collectors/docs/draft-strategies.md), the best arm per
class by energy and by speed, the 60 % acceptance line, Eq. 5's width advice and the setting to apply.

Every figure is a ratio of totals over an arm's points at a class and batch (summary.aggregate), and
only trustworthy points feed it (checks.EXCLUDING), as in the paired sweep. Pitfalls handled: a
difference within the break-even band (rule.EVEN_BAND) is not a measured difference, so an arm is
"best" only if it beats plain beyond the band (by energy: saves; by speed: more than 5 % faster),
else plain is; an arm that drafted nothing on one class but drafts on another (n-gram copying on
prose: nothing to copy) measured that class honestly, so its point there is not void; a void arm
everywhere is still excluded; an arm whose server failed is named with why, its points kept.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from collectors.energy import ledger
from collectors.sweep import checks
from collectors.sweep.marginal import width_advice
from collectors.sweep.rule import EVEN_BAND, Verdict, classify
from collectors.sweep.settings import draft_length, off_above, setting_lines
from collectors.sweep.summary import _arm

ARMS_SUMMARY_SCHEMA = "spectop.summary-arms/1"
ACCEPTANCE_LINE = 0.60  # seed 001: below it, every strategy measured cost energy
Row = Mapping[str, Any]


def _exclusions(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    """checks.exclusions, with `void` waived for an arm that drafted on some other class."""
    drafting = {r["arm"] for r in rows if r.get("drafted")}
    return [
        tuple(c for c in codes if not (c == "void" and r["arm"] in drafting))
        for r, codes in zip(rows, checks.exclusions(rows))
    ]


def _void_waived(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Each arm that drafted nothing on a class but drafts on another: where, and whether it copies."""
    out = []
    for arm in _ordered([r["arm"] for r in rows if r["arm"] != "plain"]):
        mine = [r for r in rows if r["arm"] == arm]
        drafts_on = _ordered([r.get("prompt_class") for r in mine if r.get("drafted")])
        idle_on = _ordered(
            [
                r.get("prompt_class")
                for r in mine
                if r.get("drafted") == 0 and r.get("prompt_class") not in drafts_on
            ]
        )
        if drafts_on and idle_on:
            copies = any(checks.copies_ngrams(r) for r in mine)
            out += [{"arm": arm, "prompt_class": c, "drafts_on": drafts_on, "ngram": copies} for c in idle_on]
    return out


def _ordered(values: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def summarize_arms(rows: Sequence[Row], meta: Row | None = None) -> dict[str, Any]:
    """The summary of all points so far: a row per class, batch and arm, and the verdicts per class."""
    meta = meta or {}
    excluded = _exclusions(rows)
    arms = meta.get("arm_names") or ["plain", *_ordered([r["arm"] for r in rows if r["arm"] != "plain"])]
    classes = [c["name"] for c in meta.get("classes", [])] or _ordered([r["prompt_class"] for r in rows])
    table: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for cls in classes:
        for batch in sorted({int(r["batch"]) for r in rows if r.get("prompt_class") == cls}):
            block = [
                (r, e) for r, e in zip(rows, excluded) if (r.get("prompt_class"), r["batch"]) == (cls, batch)
            ]
            entries = [_entry(cls, batch, arm, block) for arm in arms]
            plain = entries[0]
            for entry in entries:
                entry["energy_ratio"] = ledger.draft_over_plain(entry["mj_per_token"], plain["mj_per_token"])
                entry["speedup"] = ledger.draft_over_plain(entry["tok_s"], plain["tok_s"])
                entry["trusted"] = entry["trusted"] and plain["trusted"] and entry["energy_ratio"] is not None
                entry["verdict"] = (
                    classify(entry["energy_ratio"]) if entry["trusted"] and entry["arm"] != "plain" else None
                )
            table += entries
            verdicts.append(_verdict(cls, batch, entries))
    return {
        "schema": ARMS_SUMMARY_SCHEMA,
        "points": len(rows),
        "planned_points": meta.get("planned_points"),
        "idle_w": meta.get("idle_w"),
        "idle_flag": meta.get("idle_flag"),
        "arms": arms,
        "classes": classes,
        "rows": table,
        "verdicts": verdicts,
        "turn_off": _turn_off(verdicts, table),
        "round_energy_mj": round_energy_mj(table),
        "failed_arms": dict(meta.get("failed_arms") or {}),
        "void_waived": _void_waived(rows),
        # what has no trustworthy figure, and why (the CLI's exit code reads it as the paired sweep's)
        "untrusted": [
            {
                "prompt_class": t["prompt_class"],
                "batch": t["batch"],
                "arm": t["arm"],
                "because": t["excluded"] or (["no points"] if not t["points"] else ["no energy measured"]),
            }
            for t in table
            if not t["trusted"]
        ],
        "rule": {
            "even_band": EVEN_BAND,
            "acceptance_line": ACCEPTANCE_LINE,
            "excluding_flags": sorted(checks.EXCLUDING),
        },
        "flags": sorted({f["code"] for r in rows for f in r.get("flags", [])}),
    }


def round_energy_mj(table: Sequence[Row]) -> dict[str, float]:
    """Energy per round J_k = mJ/token × G for each measured draft length (`draft-N` arms), at the
    smallest batch swept, the median over classes: a round's cost is the hardware's (a verify of
    k + 1 positions and k draft steps), so it varies little with the prompts; keys are the lengths
    as text (JSON). The drafting panel pairs it with the server's live survival (marginal.py)."""
    smallest = min((int(t["batch"]) for t in table), default=None)
    by_length: dict[int, list[float]] = {}
    for t in table:
        n = draft_length(t["arm"])
        if n is None or t["batch"] != smallest or not t["trusted"]:
            continue
        if t["mj_per_token"] and t["mean_advance"]:
            by_length.setdefault(n, []).append(t["mj_per_token"] * t["mean_advance"])
    return {str(n): statistics.median(js) for n, js in sorted(by_length.items())}


def _entry(cls: str, batch: int, arm: str, block: Sequence[tuple[Row, tuple[str, ...]]]) -> dict[str, Any]:
    mine = [(r, e) for r, e in block if r["arm"] == arm]
    figures = _arm([r for r, _ in mine], [e for _, e in mine])
    server = next((r["server"] for r, _ in mine if r.get("server")), None) or {}
    return {
        "prompt_class": cls,
        "batch": batch,
        "arm": arm,
        **figures,
        "excluded": sorted({c for _, e in mine for c in e}),
        "backend": server.get("backend"),
        "build": server.get("build"),
        "command": server.get("command"),
    }


def _verdict(cls: str, batch: int, entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Best by energy and by speed, the 60 % line, the width advice and the setting, for one class and batch."""
    plain = entries[0]
    trusted = [e for e in entries[1:] if e["trusted"]]
    saving = [e for e in trusted if e["verdict"] is Verdict.SAVES]
    by_energy = min(saving, key=lambda e: e["mj_per_token"])["arm"] if saving else "plain"
    faster = [e for e in trusted if (e["speedup"] or 0) > 1.0 + EVEN_BAND]
    by_speed = max(faster, key=lambda e: e["tok_s"])["arm"] if faster else "plain"
    low = [e for e in trusted if e["acceptance"] is not None and e["acceptance"] < ACCEPTANCE_LINE]
    steps = width_advice(
        {
            n: (e["mj_per_token"], e["mean_advance"])
            for e in trusted
            if (n := draft_length(e["arm"])) is not None
        }
    )
    best = next(e for e in entries if e["arm"] == by_energy)
    return {
        "prompt_class": cls,
        "batch": batch,
        "plain_trusted": plain["trusted"],
        "best_energy": by_energy,
        "best_speed": by_speed,
        "differ": by_energy != by_speed,
        "below_line": [
            {"arm": e["arm"], "acceptance": e["acceptance"], "verdict": e["verdict"]} for e in low
        ],
        "below_line_all_cost": bool(low) and all(e["verdict"] is Verdict.COSTS for e in low),
        "width_advice": [s.sentence for s in steps],
        "settings": setting_lines(best["arm"], best.get("backend"), best.get("command"), batch),
    }


def _turn_off(verdicts: Sequence[dict[str, Any]], table: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per class swept over batches: drafting best up to some batch and plain beyond, as one setting."""
    out = []
    for cls in _ordered([v["prompt_class"] for v in verdicts]):
        mine = sorted(
            (v for v in verdicts if v["prompt_class"] == cls and v["plain_trusted"]), key=lambda v: v["batch"]
        )
        drafting = [v["batch"] for v in mine if v["best_energy"] != "plain"]
        plain = [v["batch"] for v in mine if v["best_energy"] == "plain"]
        if drafting and plain and max(drafting) < min(plain):
            top = max(drafting)
            server = next((t for t in table if t["prompt_class"] == cls and t.get("backend")), {})
            best = next(v["best_energy"] for v in mine if v["batch"] == top)
            setting = off_above(server.get("backend"), top, server.get("build"), draft_length(best))
            out.append({"prompt_class": cls, "batch": top, "setting": setting})
    return out
