"""The sweep's summary in words, shared by the App's notification and the sweep tab; pure, no Textual."""

from __future__ import annotations

from typing import Any

from collectors.sweep.arms_summary import ARMS_SUMMARY_SCHEMA


def is_arms(summary: dict[str, Any]) -> bool:
    """A multi-arm sweep's summary (an arm x class grid), not a paired one (note 25's table)."""
    return summary.get("schema") == ARMS_SUMMARY_SCHEMA


def sweep_headline(summary: dict[str, Any]) -> str:
    """One line for a notification: the recommendation, or the best arm per class by energy."""
    if not is_arms(summary):
        return str(summary["recommendation"])
    batches = len({v["batch"] for v in summary["verdicts"]}) > 1
    best = [
        f"{v['prompt_class']}" + (f" B={v['batch']}" if batches else "") + f" {v['best_energy']}"
        for v in summary["verdicts"]
        if v["plain_trusted"]
    ]
    return "best by energy: " + ", ".join(best) if best else "no trustworthy plain point: no arm compared"
