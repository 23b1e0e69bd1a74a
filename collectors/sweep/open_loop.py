"""Open-loop load for the sweep: seeded arrival times at an offered rate, and the concurrency the
requests then achieved, read from their own send and completion times (collectors/docs/sweep.md,
"Open-loop points").

Arrivals: a point offers `n` requests over n / rate seconds. Its gaps (before the first request,
between requests, after the last: n + 1 of them) are gamma draws of shape 1 / CV², scaled to sum to
that span, i.e. a Dirichlet split of it. Shape 1 (`poisson`) is exactly a Poisson process
conditioned on its count (n sorted uniform times); a smaller shape (`bursty`, CV 2 by default)
bunches the same requests into bursts with long lulls. Conditioning on the count makes the offered
rate exact over every point, so a point's concurrency differs from another's by the server, not
by how many requests a short random draw happened to hold. The three points at a rate in a pass
(plain before, draft, plain after) get the same times: both arms serve the same traffic.

Achieved concurrency: the requests in flight (sent, not yet done) over the point's window, from
its start to the last completion: the seconds spent at each level (`in_flight_s`), whose
time-average and time-weighted percentiles are the point's; seconds add up over points, so the
summary pools them exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.errors import SpectopError
from collectors.sweep.point import Flag, InFlight, SweepPoint

BURSTY_CV = 2.0  # `bursty` alone: inter-arrival gaps twice as variable as Poisson's
MAX_CV = 10.0
ARRIVALS_FIX = "e.g. --arrivals poisson, or --arrivals bursty (CV 2), or --arrivals bursty:3"


@dataclass(frozen=True, slots=True)
class Arrivals:
    """An arrival process: its name and its gaps' coefficient of variation (1 for Poisson)."""

    kind: str  # "poisson" or "bursty"
    cv: float = 1.0

    @property
    def label(self) -> str:
        return "poisson" if self.kind == "poisson" else f"bursty (CV {self.cv:g})"

    @property
    def spec(self) -> str:
        """The form `--arrivals` takes and a run saves."""
        return "poisson" if self.kind == "poisson" else f"bursty:{self.cv:g}"


def parse_arrivals(text: str) -> Arrivals:
    """`poisson`, `bursty` (CV 2) or `bursty:CV` with CV above 1 (below 1 is smoother than Poisson)."""
    name, _, cv_text = text.strip().lower().partition(":")
    if name == "poisson" and not cv_text:
        return Arrivals("poisson")
    if name == "bursty":
        try:
            cv = float(cv_text) if cv_text else BURSTY_CV
        except ValueError:
            cv = math.nan
        if math.isfinite(cv) and 1.0 < cv <= MAX_CV:
            return Arrivals("bursty", cv)
        raise SpectopError(
            f"--arrivals bursty:CV needs a coefficient of variation above 1 and at most {MAX_CV:g}, "
            f"not {cv_text!r}",
            ARRIVALS_FIX,
        )
    raise SpectopError(f"--arrivals must be poisson or bursty[:CV], not {text!r}", ARRIVALS_FIX)


def arrival_offsets_s(count: int, rate_rps: float, arrivals: Arrivals, seed: object) -> list[float]:
    """`count` send times in seconds from the point's start, sorted, offered at `rate_rps` over
    count / rate_rps seconds; the same seed gives the same times."""
    rng = random.Random(f"arrivals:{seed}")
    shape = 1.0 / arrivals.cv**2
    gaps = [rng.gammavariate(shape, 1.0) for _ in range(count + 1)]
    span_s, total = count / rate_rps, sum(gaps)
    offsets, t = [], 0.0
    for gap in gaps[:-1]:
        t += gap
        offsets.append(span_s * t / total)
    return offsets


def in_flight(spans: Iterable[tuple[float, float]], t0_s: float, t1_s: float) -> InFlight:
    """The requests in flight over [t0_s, t1_s], from each request's (send, done) times."""
    inside = [(max(t0_s, a), min(t1_s, b)) for a, b in spans if b > t0_s and a < t1_s]
    edges = sorted([(a, 1) for a, _ in inside] + [(b, -1) for _, b in inside])
    seconds: list[float] = [0.0]
    level, t = 0, t0_s
    for at, step in edges:  # a completion and a send at the same instant: the completion first
        seconds[level] += at - t
        level, t = level + step, at
        seconds.extend([0.0] * (level + 1 - len(seconds)))
    seconds[level] += t1_s - t
    return figures_of(seconds)


def figures_of(seconds: Sequence[float]) -> InFlight:
    """The time-average, time-weighted p50 and p90, and the most ever in flight, of seconds per level."""
    total = sum(seconds)
    levels = [k for k, s in enumerate(seconds) if s > 0]
    if total <= 0:
        return InFlight(mean=None, p50=None, p90=None, maximum=None, seconds=tuple(seconds))
    return InFlight(
        mean=sum(k * s for k, s in enumerate(seconds)) / total,
        p50=_level_at(seconds, 0.5 * total),
        p90=_level_at(seconds, 0.9 * total),
        maximum=max(levels),
        seconds=tuple(round(s, 6) for s in seconds),
    )


def pooled(figures: Iterable[InFlight | None]) -> InFlight | None:
    """Several points' in-flight figures as one: their seconds per level added up."""
    present = [f for f in figures if f is not None]
    if not present:
        return None
    seconds = [0.0] * max(len(f.seconds) for f in present)
    for f in present:
        for k, s in enumerate(f.seconds):
            seconds[k] += s
    return figures_of(seconds)


def _level_at(seconds: Sequence[float], at_s: float) -> int:
    """The first level whose cumulative seconds reach `at_s`."""
    cumulative = 0.0
    for k, s in enumerate(seconds):
        cumulative += s
        if cumulative >= at_s and s > 0:
            return k
    return len(seconds) - 1


def open_loop_problem(row: Mapping[str, Any]) -> str | None:
    """Why a points.jsonl row's `load` or `in_flight` is not what the summary reads (store.py)."""
    load, flight = row.get("load"), row.get("in_flight")
    if load is not None and not (
        isinstance(load, dict)
        and _positive(load.get("rate_rps"))
        and isinstance(load.get("arrivals"), str)
        and all(_whole(load.get(k)) for k in ("seed", "requests"))
    ):
        return "load is not {rate_rps, arrivals, seed, requests}"
    if flight is not None and not (
        isinstance(flight, dict)
        and isinstance(flight.get("seconds"), list)
        and all(_positive(s) or s == 0 for s in flight["seconds"])
        and (flight.get("mean") is None or _positive(flight.get("mean")) or flight.get("mean") == 0)
        and all(flight.get(k) is None or _whole(flight.get(k)) for k in ("p50", "p90", "max"))
    ):
        return "in_flight is not {mean, p50, p90, max, seconds}"
    return None


def _positive(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def late_sends_flag(row: SweepPoint) -> list[Flag]:
    """An open-loop point whose client sent a tenth of its requests later than their schedule by
    more than half a mean gap (and 20 ms: a loaded machine's event loop is that late anyway): the
    traffic came bunched, not as offered. A warning: the point counts, and says so."""
    late_ms = row.load.send_late_ms_p90 if row.load else None
    if row.load is None or late_ms is None or late_ms <= max(20.0, 500.0 / row.load.rate_rps):
        return []
    return [
        Flag(
            "late-sends",
            f"a tenth of the requests went out over {late_ms:.0f} ms late against their arrival times: "
            "the client was too busy for the rate (a loaded machine), so the traffic came bunched",
        )
    ]
