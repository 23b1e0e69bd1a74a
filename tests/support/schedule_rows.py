"""A multi-arm sweep's points with a scheduled and a K = 0 arm, on note 25's figures: plain and draft
as published; the scheduled arm drafting at 1 and 2 and K = 0 from 4, K = 0 at the calibrated
overhead (collectors/simulator/k0_overhead.py: +8.89 % at 4, +11.17 % at 8, +13.46 % at 16 in time,
the extra time at 3 W idle). Used by the sweep's and the Sweep tab's tests."""

from __future__ import annotations

from typing import Any

from collectors.sweep.records import ArmsSummary, summary_from_json
from collectors.sweep.summary import summarize
from tests.support.sweep_rows import points

SERVER = {"backend": "vllm", "command": "vllm serve ..."}
# batch -> arm -> (tok/s, W); mJ/token = 1000 W / tok/s
FIGURES = {
    1: {"plain": (61.9, 22.9), "draft": (78.3, 29.8), "scheduled": (78.3, 29.8), "k0": (58.1, 21.7)},
    2: {"plain": (100.2, 39.1), "draft": (125.5, 35.0), "scheduled": (125.5, 35.0), "k0": (94.0, 36.9)},
    4: {"plain": (192.3, 39.0), "draft": (163.4, 37.1), "scheduled": (176.6, 36.06), "k0": (176.6, 36.06)},
    8: {"plain": (339.2, 36.9), "draft": (229.8, 37.6), "scheduled": (305.1, 33.49), "k0": (305.1, 33.49)},
    16: {"plain": (377.0, 35.9), "draft": (329.1, 37.5), "scheduled": (332.3, 32.0), "k0": (332.3, 32.0)},
}


def _row(batch: int, arm: str, tok_s: float, power_w: float, phase: str = "") -> dict[str, Any]:
    tokens = 300 * batch
    seconds = tokens / tok_s
    drafting = arm == "draft" or (arm == "scheduled" and batch < 4)
    return {
        "pass": 0, "batch": batch, "arm": arm, "phase": phase, "prompt_class": "power",
        "committed_tokens": tokens, "window_s": seconds, "energy_window_s": seconds,
        "energy_j": power_w * seconds, "energy_covered": True, "net_energy_j": None,
        "drafted": (200 * batch if drafting else 0) if arm != "plain" else None,
        "accepted": (140 * batch if drafting else 0) if arm != "plain" else None,
        "steps": 100, "chunk_gaps_ms": [], "requests": [], "flags": [], "server": SERVER,
    }  # fmt: skip


def rows(figures=FIGURES) -> list[dict[str, Any]]:
    out = []
    for batch, arms in figures.items():
        out += [
            _row(batch, "plain", *arms["plain"], phase="before"),
            _row(batch, "plain", *arms["plain"], phase="after"),
        ]
        out += [_row(batch, arm, *arms[arm]) for arm in ("draft", "scheduled", "k0")]
    return out


def summary_of(figures=FIGURES) -> ArmsSummary:
    record = summary_from_json(summarize(points(rows(figures))))
    assert isinstance(record, ArmsSummary)
    return record
