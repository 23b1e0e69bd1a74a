"""A schedule measured, not assumed: the scheduled arm against the lower envelope of plain and
always-draft, batch by batch, and what configured-but-K = 0 costs against plain.

A multi-arm sweep with an arm named `scheduled` (the server started with the schedule) gets, at
each class and batch where its figures and plain's are trusted, the envelope (the lower mJ/token of
plain and every arm that drafts at every batch: `draft`, `draft-N`) and how far above it the
scheduled arm sits; within the break-even band (rule.EVEN_BAND) it is as good as the envelope,
since a smaller difference is no measured one. An arm named `k0` (speculation loaded, nothing
drafted) gets its cost against plain in energy and in time per output token (published
measurements put the time at +6.6 % to +21.6 % on vLLM, so "off" in a schedule is not plain).

Over a load (the share of time spent at each concurrency, e.g. the dashboard's batch histogram or
the demo's walk), an arm's energy per token is its watts over its tokens per second, each weighted
by the time at that batch: sum(h_B W_B) / sum(h_B tok/s_B). A load batch that was not swept takes
the swept batch nearest in log B.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from collectors.sweep.records import ArmEntry, ArmFigures, ArmsSummary, LoadVerification, ScheduleCheck
from collectors.sweep.rule import EVEN_BAND

SCHEDULED, K0, ALWAYS = "scheduled", "k0", "draft"
NOT_ALWAYS = (SCHEDULED, K0, "ngram")  # arms that do not draft at every batch
# the demo's walking load: 1, 2, 4, 8, 16, 8, 4, 2 concurrent requests, equal time at each
WALKING_LOAD: Mapping[int, float] = {1: 1 / 8, 2: 2 / 8, 4: 2 / 8, 8: 2 / 8, 16: 1 / 8}


def _mj(f: ArmFigures | None) -> float | None:
    return f.mj_per_token if f is not None and f.trusted else None


def schedule_checks(table: Sequence[ArmEntry]) -> list[ScheduleCheck]:
    """Per class and batch with a scheduled or k0 arm: where it stands against plain and the envelope."""
    cells: dict[tuple[str, int], dict[str, ArmFigures]] = {}
    for t in table:
        cells.setdefault((t.prompt_class, t.batch), {})[t.arm] = t.figures
    out = []
    for (cls, batch), arms in cells.items():
        if SCHEDULED not in arms and K0 not in arms:
            continue
        fixed = {a: mj for a, f in arms.items() if a not in NOT_ALWAYS and (mj := _mj(f)) is not None}
        envelope = min(fixed, key=lambda a: fixed[a]) if "plain" in fixed and len(fixed) > 1 else None
        scheduled = _mj(arms.get(SCHEDULED))
        above = scheduled / fixed[envelope] - 1.0 if envelope and scheduled is not None else None
        plain, k0 = arms.get("plain"), arms.get(K0)
        k0_energy = k0_time = None
        if plain is not None and k0 is not None and plain.trusted and k0.trusted:
            if plain.mj_per_token and k0.mj_per_token:
                k0_energy = k0.mj_per_token / plain.mj_per_token - 1.0
            if plain.tok_s and k0.tok_s:
                k0_time = plain.tok_s / k0.tok_s - 1.0
        out.append(
            ScheduleCheck(
                prompt_class=cls,
                batch=batch,
                envelope_arm=envelope,
                envelope_mj_per_token=fixed[envelope] if envelope else None,
                scheduled_mj_per_token=scheduled,
                above_envelope=above,
                within_band=None if above is None else above <= EVEN_BAND,
                k0_energy_cost=k0_energy,
                k0_time_cost=k0_time,
            )
        )
    return out


def _pct(x: float) -> str:
    return f"{100 * x:+.1f} %"


def check_sentences(checks: Sequence[ScheduleCheck]) -> list[str]:
    """One line per batch for the scheduled arm, one for K = 0's cost."""
    lines = []
    for c in checks:
        where = f"{c.prompt_class} at B={c.batch}" if c.prompt_class else f"B={c.batch}"
        if c.above_envelope is not None and c.envelope_arm and c.envelope_mj_per_token is not None:
            stands = (
                "at or below the envelope" if c.above_envelope <= 0 else f"{_pct(c.above_envelope)} above"
            )
            within = "within the band" if c.within_band else f"OUTSIDE the {100 * EVEN_BAND:.0f} % band"
            lines.append(
                f"Scheduled {where}: {c.scheduled_mj_per_token:.1f} mJ/token, {stands} "
                f"({c.envelope_arm} {c.envelope_mj_per_token:.1f}): {within}."
            )
        elif c.envelope_arm is not None or c.scheduled_mj_per_token is not None:
            lines.append(f"Scheduled {where}: no trustworthy figures to compare.")
        if c.k0_energy_cost is not None or c.k0_time_cost is not None:
            energy = "—" if c.k0_energy_cost is None else _pct(c.k0_energy_cost)
            time = "—" if c.k0_time_cost is None else _pct(c.k0_time_cost)
            lines.append(f"K = 0 {where}: {energy} energy and {time} time per token against plain.")
    return lines


def _nearest(batch: int, swept: Sequence[int]) -> int:
    return min(swept, key=lambda b: (abs(math.log(b) - math.log(batch)), b))


def _in_load(batch: int, load: Mapping[int, float], figures: Mapping[int, ArmFigures]) -> bool:
    """Whether the load needs the swept `batch` (some load batch is nearest to it)."""
    return any(_nearest(b, sorted(figures)) == batch for b in load)


def _over_load(figures: Mapping[int, ArmFigures], load: Mapping[int, float], by_tokens: bool) -> float | None:
    """mJ/token over the load, None when a batch it needs is untrusted: time shares h give
    sum(h W) / sum(h tok/s); token shares s (`spectop tune --profile`'s) give sum(s mJ/token)."""
    swept = sorted(figures)
    if not swept:
        return None
    joules = tokens = 0.0
    for batch, share in load.items():
        f = figures[_nearest(batch, swept)]
        if not f.trusted or f.power_w is None or not f.tok_s or f.mj_per_token is None:
            return None
        joules += share * (f.mj_per_token / 1000.0 if by_tokens else f.power_w)
        tokens += share * (1.0 if by_tokens else f.tok_s)
    return 1000.0 * joules / tokens if tokens else None


def verify_over_load(
    summary: ArmsSummary,
    load: Mapping[int, float] = WALKING_LOAD,
    prompt_class: str | None = None,
    by_tokens: bool = False,
) -> LoadVerification:
    """Whether the scheduled arm saves over `load` (batch -> share of time, or of tokens with
    `by_tokens`) against always-draft and plain, and sits within the band of the envelope at every
    swept batch; the one line says so."""
    cls = prompt_class if prompt_class is not None else (summary.classes[0] if summary.classes else "")
    by_arm: dict[str, dict[int, ArmFigures]] = {}
    for t in summary.rows:
        if t.prompt_class == cls:
            by_arm.setdefault(t.arm, {})[t.batch] = t.figures
    energy = {arm: _over_load(by_arm.get(arm, {}), load, by_tokens) for arm in (SCHEDULED, ALWAYS, "plain")}
    untrusted = sorted(
        {
            b
            for arm in energy
            for b, f in by_arm.get(arm, {}).items()
            if not f.trusted and _in_load(b, load, by_arm[arm])
        }
    )
    sched, always, plain = energy[SCHEDULED], energy[ALWAYS], energy["plain"]
    vs_always = 1.0 - sched / always if sched is not None and always else None
    vs_plain = 1.0 - sched / plain if sched is not None and plain else None
    above = tuple(c.batch for c in summary.schedule or () if c.prompt_class == cls and c.within_band is False)
    if vs_always is None or vs_plain is None:
        missing = [arm for arm, e in energy.items() if e is None]
        where = f" (untrusted at B={', '.join(map(str, untrusted))}: see the flags)" if untrusted else ""
        line = f"not verified: no trustworthy {', '.join(missing)} figures at every batch of this load{where}"
    elif above:
        line = (
            f"not verified: the scheduled arm sits above the lower envelope of plain and always-draft by "
            f"more than the {100 * EVEN_BAND:.0f} % band at B={', '.join(map(str, above))}"
        )
    elif vs_always <= 0 or vs_plain <= 0:
        line = (
            f"not verified: over this load the schedule costs {_pct(-vs_always)} against always-draft "
            f"and {_pct(-vs_plain)} against plain"
        )
    else:
        line = (
            f"verified: the schedule saves {100 * vs_always:.1f} % against always-draft and "
            f"{100 * vs_plain:.1f} % against plain over this load"
        )
    return LoadVerification(
        load={str(b): s for b, s in sorted(load.items())},
        prompt_class=cls,
        scheduled_mj_per_token=sched,
        always_mj_per_token=always,
        plain_mj_per_token=plain,
        saving_vs_always=vs_always,
        saving_vs_plain=vs_plain,
        above_band=above,
        verified=line.startswith("verified"),
        line=line,
    )


def check_summary(checks: Sequence[ScheduleCheck]) -> str | None:
    """The checks in one line (the Sweep tab's): where the scheduled arm holds, and K = 0's cost."""
    if not checks:
        return None
    held = [c.batch for c in checks if c.within_band]
    above = [c.batch for c in checks if c.within_band is False]
    parts = []
    if held or above:
        parts.append(
            "Scheduled: within the band at B=" + ", ".join(map(str, held))
            if held and not above
            else f"Scheduled: ABOVE the envelope's band at B={', '.join(map(str, above))}"
        )
    times = [c.k0_time_cost for c in checks if c.k0_time_cost is not None]
    if times:
        parts.append(f"K = 0 costs {_pct(min(times))} to {_pct(max(times))} time per token against plain")
    return "; ".join(parts) + "." if parts else None
