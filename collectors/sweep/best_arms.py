"""A multi-arm sweep's verdicts (seed 001's question, collectors/docs/draft-strategies.md): per class
and batch the best arm by energy and by speed, the 60 % acceptance line, Eq. 5's width advice and
the setting to apply; per class the batch from which drafting should be off.

Pitfalls handled: a difference within the break-even band (rule.EVEN_BAND) is not a measured
difference, so an arm is "best" only if it beats plain beyond the band (by energy: saves; by speed:
more than 5 % faster), else plain is; only trusted entries (summary.against_plain) are compared.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from collectors.sweep import checks
from collectors.sweep.marginal import width_advice
from collectors.sweep.point import SweepPoint
from collectors.sweep.records import ArmEntry, BelowLine, ClassVerdict, TurnOff, VoidWaived
from collectors.sweep.rule import EVEN_BAND, Verdict
from collectors.sweep.schedule_check import K0, SCHEDULED
from collectors.sweep.settings import draft_length, off_above, setting_lines

ACCEPTANCE_LINE = 0.60  # seed 001: below it, every strategy measured cost energy


def round_energy_mj(table: Sequence[ArmEntry]) -> dict[str, float]:
    """Energy per round J_k = mJ/token × G for each measured draft length (`draft-N` arms), at the
    smallest batch swept, the median over classes: a round's cost is the hardware's (a verify of
    k + 1 positions and k draft steps), so it varies little with the prompts; keys are the lengths
    as text (JSON). The drafting panel pairs it with the server's live survival (marginal.py)."""
    smallest = min((t.batch for t in table), default=None)
    by_length: dict[int, list[float]] = {}
    for t in table:
        n = draft_length(t.arm)
        if n is None or t.batch != smallest or not t.figures.trusted:
            continue
        if t.figures.mj_per_token and t.figures.mean_advance:
            by_length.setdefault(n, []).append(t.figures.mj_per_token * t.figures.mean_advance)
    return {str(n): statistics.median(js) for n, js in sorted(by_length.items())}


def best_arms(cls: str, batch: int, entries: Sequence[ArmEntry]) -> ClassVerdict:
    """Best by energy and by speed, the 60 % line, the width advice and the setting, for one class and batch."""
    plain = entries[0]
    trusted = [e for e in entries[1:] if e.figures.trusted]
    saving = [e for e in trusted if e.verdict is Verdict.SAVES]
    by_energy = min(saving, key=lambda e: e.figures.mj_per_token or 0.0).arm if saving else "plain"
    faster = [e for e in trusted if (e.speedup or 0) > 1.0 + EVEN_BAND]
    by_speed = max(faster, key=lambda e: e.figures.tok_s or 0.0).arm if faster else "plain"
    # a scheduled or K = 0 arm drafts nothing at some batches by design: its acceptance is no drafter's
    low = [
        e
        for e in trusted
        if e.figures.acceptance is not None
        and e.figures.acceptance < ACCEPTANCE_LINE
        and e.arm not in (SCHEDULED, K0)
    ]
    steps = width_advice(
        {
            n: (e.figures.mj_per_token, e.figures.mean_advance)
            for e in trusted
            if (n := draft_length(e.arm)) is not None
        }
    )
    best = next(e for e in entries if e.arm == by_energy)
    return ClassVerdict(
        prompt_class=cls,
        batch=batch,
        plain_trusted=plain.figures.trusted,
        best_energy=by_energy,
        best_speed=by_speed,
        differ=by_energy != by_speed,
        below_line=tuple(BelowLine(e.arm, e.figures.acceptance, e.verdict) for e in low),
        below_line_all_cost=bool(low) and all(e.verdict is Verdict.COSTS for e in low),
        width_advice=tuple(s.sentence for s in steps),
        settings=tuple(setting_lines(best.arm, best.backend, best.command, batch)),
    )


def turn_off(verdicts: Sequence[ClassVerdict], table: Sequence[ArmEntry]) -> list[TurnOff]:
    """Per class swept over batches: drafting best up to some batch and plain beyond, as one setting."""
    out = []
    for cls in dict.fromkeys(v.prompt_class for v in verdicts):
        mine = sorted(
            (v for v in verdicts if v.prompt_class == cls and v.plain_trusted), key=lambda v: v.batch
        )
        drafting = [v.batch for v in mine if v.best_energy != "plain"]
        plain = [v.batch for v in mine if v.best_energy == "plain"]
        if drafting and plain and max(drafting) < min(plain):
            top = max(drafting)
            server = next((t for t in table if t.prompt_class == cls and t.backend), None)
            best = next(v.best_energy for v in mine if v.batch == top)
            backend, build = (server.backend, server.build) if server else (None, None)
            out.append(TurnOff(cls, top, off_above(backend, top, build, draft_length(best))))
    return out


def void_waived(rows: Sequence[SweepPoint]) -> list[VoidWaived]:
    """Each arm that drafted nothing on a class but drafts on another (n-gram copying on prose:
    nothing to copy): where, and whether it copies; such a point measured that class honestly."""
    out = []
    for arm in _in_order([r.arm for r in rows if r.arm != "plain"]):
        mine = [r for r in rows if r.arm == arm]
        drafts_on = _in_order([r.prompt_class for r in mine if r.window.drafted])
        idle_on = _in_order(
            [r.prompt_class for r in mine if r.window.drafted == 0 and r.prompt_class not in drafts_on]
        )
        if drafts_on and idle_on:
            copies = any(checks.copies_ngrams(r) for r in mine)
            out += [VoidWaived(arm, c, tuple(drafts_on), copies) for c in idle_on]
    return out


def _in_order(values: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(values))
