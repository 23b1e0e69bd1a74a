"""Is a meter's window believable? Bounds on power, and checks that its counter moves and never runs back.

A broken meter gives numbers that look like measurements: a dead exporter page served from a cache
keeps the same counter (0 J over a busy window, "covered"), a counter that glitches backwards is
read as a reset and adds its whole value (megajoules in a second), a sensor stuck at one value
integrates a constant. Each is caught here, for the sweep's points (`collectors/sweep/checks.py`)
and the live figures (`collectors/live/accounting.py`) alike:

- **stale**: while the server worked, the meter's value (the counter; for an integrated meter, the
  power it reads) did not change for `stale_after_s` (5 update periods, at least 1 s), or the
  window's energy is 0 J: no powered device draws 0 W;
- **backwards**: a reading inside the window went back (held level by the sampler, or a drop a
  counter tracker could not read as a reset): the energy of that stretch is missing;
- **implausible**: mean power over the window above what the devices can draw: 1.5 × their power
  limit where the meter knows it, else a generous bound per device for the boundary (500 W for a
  SoC, 2 kW for a GPU, 1 kW for a CPU package, 3 kW otherwise), with room for one update period
  of quantization on short windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from collectors.meters.base import MeterInfo

STALE_PERIODS = 5  # a working sensor changes value within a period; five unchanged is not lag
STALE_MIN_S = 1.0  # and never less than this: timer jitter and quantized counters stay clear of it
POWER_LIMIT_MARGIN = 1.5  # boards draw past their limit for milliseconds, never by half over a window
# Per device where the limit is unknown, the first boundary word that matches ("SoC (CPU+GPU+ANE)"
# is a SoC): above the largest parts sold (an M-series Ultra under 300 W, a B200 board 1 kW, a
# 192-core EPYC package 500 W).
BOUND_PER_DEVICE_W = (("SoC", 500.0), ("GPU", 2000.0), ("CPU", 1000.0))
DEFAULT_BOUND_W = 3000.0
STALE, BACKWARDS, IMPLAUSIBLE = "meter-stale", "meter-backwards", "meter-implausible"


class Sample(Protocol):
    """What a check reads of a stored reading (MeterReading and live.PowerPoint both have it)."""

    @property
    def t_s(self) -> float: ...
    @property
    def energy_j(self) -> float: ...
    @property
    def power_w(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class MeterProblem:
    """Why a window's energy is not a measurement: a flag code and a one-line message."""

    code: str
    message: str


def power_bound_w(info: MeterInfo) -> float:
    """The most the meter's devices can draw, on average over a window."""
    if info.power_limit_w and info.power_limit_w > 0:
        return POWER_LIMIT_MARGIN * info.power_limit_w
    per_device = next((w for key, w in BOUND_PER_DEVICE_W if key in info.boundary), DEFAULT_BOUND_W)
    return per_device * max(1, len(info.devices))


def stale_after_s(info: MeterInfo) -> float:
    return max(STALE_PERIODS * info.update_period_s, STALE_MIN_S)


def unchanged_s(samples: Sequence[Sample], t0_s: float, t1_s: float, integrated: bool) -> float:
    """The longest stretch inside [t0_s, t1_s] over which the meter's value stayed the same.

    The value is the counter, or for an integrated meter the power it read (its energy always
    grows). A stretch runs from the first reading of a value to the last one, clipped to the window.
    """
    longest, run_t0, run_value = 0.0, None, None
    for s in samples:
        value = s.power_w if integrated and s.power_w is not None else s.energy_j
        if run_t0 is None or value != run_value:
            run_t0, run_value = s.t_s, value
            continue
        longest = max(longest, min(s.t_s, t1_s) - max(run_t0, t0_s))
    return longest


def window_problems(
    energy_j: float,
    window_s: float,
    unchanged_s: float,
    faults: Sequence[str],
    info: MeterInfo,
    work_ran: bool,
) -> list[MeterProblem]:
    """What is wrong with a meter over a window it covered.

    `unchanged_s`: the longest stretch of it over which the meter's value stood still (`unchanged_s()`);
    `faults`: what its readings in the window reported; `work_ran`: the server generated tokens in it,
    so the meter's value had to move. A window with no work is still stale at 0 J once it spans an
    update period (an idle device draws power too).
    """
    problems = []
    if faults:
        problems.append(
            MeterProblem(BACKWARDS, f"the meter's counter went backwards in the window ({faults[0]})")
        )
    if energy_j <= 0 and (work_ran or window_s >= info.update_period_s):
        doing = "while the server worked" if work_ran else f"over {window_s:.1f} s"
        problems.append(MeterProblem(STALE, f"the meter counted 0 J {doing}: it is stuck or not counting"))
    elif work_ran and unchanged_s >= stale_after_s(info):
        what = "power reading" if info.method == "integrated" else "counter"
        problems.append(
            MeterProblem(
                STALE,
                f"the meter's {what} did not change for {unchanged_s:.1f} s while the server worked "
                f"(it updates every {info.update_period_s:g} s): a stuck sensor or a cached page",
            )
        )
    bound_w = power_bound_w(info)
    # a short window may hold one update period's worth of a quantized counter: allow for it
    if window_s > 0 and energy_j / window_s > bound_w * (1 + info.update_period_s / window_s):
        problems.append(
            MeterProblem(
                IMPLAUSIBLE,
                f"the meter reads {energy_j / window_s:,.0f} W over the window, more than its devices "
                f"can draw (at most {bound_w:,.0f} W for {_devices(info)})",
            )
        )
    return problems


def _devices(info: MeterInfo) -> str:
    n = max(1, len(info.devices))
    return f"{n} × {info.boundary}" if n > 1 else info.boundary
