"""`spectop sweep`'s line per completed point, and what it prints of power: the load each point
ran under (B requests at once, or requests arriving at a rate, with the mean in flight it achieved)."""

from __future__ import annotations

from collectors.energy import ledger
from collectors.sweep import checks
from collectors.sweep.point import SweepPoint


def watts(power_w: float | None) -> str:
    return "—" if power_w is None else f"{power_w:.1f} W"


def point_line(row: SweepPoint, said: set[str] | None = None) -> str:
    """One completed point; a flag every point of the run carries (the meter's) is said once,
    under the first point, and `said` keeps which."""
    said = set() if said is None else said
    energy, tokens = row.energy, row.window.committed_tokens
    mj = "—" if energy.mj_per_token is None else f"{energy.mj_per_token:.0f} mJ/token"
    if not energy.energy_covered and energy.energy_j and tokens:
        # the meter did not cover the window: its energy is a lower bound (the flag says so below)
        mj = f"≥ {ledger.mj_per_token(energy.energy_j, tokens):.0f} mJ/token"
    acceptance = row.window.acceptance
    acc = "" if acceptance is None else f", acceptance {100 * acceptance:.0f} %"
    new = [f for f in row.flags if f.code not in said]
    said.update(f.code for f in new if f.code in checks.RUN_WIDE)
    flags = "".join(f"\n    ! {f.message}" for f in new)
    phase = f" {row.phase}" if row.phase else ""
    cls = f"{row.prompt_class} " if row.prompt_class else ""
    load, achieved = f"B={row.batch:<3}", ""
    if row.load is not None:
        load = f"rate {row.load.label}"
        if row.in_flight and row.in_flight.mean is not None:
            achieved = f", {row.in_flight.mean:.2f} in flight (max {row.in_flight.maximum})"
    return (
        f"  {cls}{load} {row.arm}{phase}: {row.tok_s or 0.0:.1f} tok/s{achieved}, {watts(energy.power_w)}, "
        f"{mj}{acc}{flags}"
    )
