"""Electricity prices for the ledger's report: one flat price per kWh, or a time-of-use table.

A table is a CSV of `HH:MM-HH:MM,price` lines in local time (a `#` line is a comment); a span may
wrap past midnight (`22:00-06:00`) and the spans must cover the day once. The ledger keeps hours,
so an hour's energy is priced at the mean of its minutes' prices (a 06:30 boundary splits the hour
in half): energy within an hour is taken as spread evenly.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError

_SPAN = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")
_FIX = "give --price 0.30 (per kWh) or a CSV of HH:MM-HH:MM,price lines covering the day"


@dataclass(frozen=True, slots=True)
class Price:
    """The price per kWh of each minute of the local day (1,440 entries), and how it was given."""

    per_minute: tuple[float, ...]
    described: str

    def of_hour(self, start_minute: int) -> float:
        """The mean price over the hour that begins at `start_minute` of the local day."""
        return sum(self.per_minute[(start_minute + m) % 1440] for m in range(60)) / 60


def parse_price(text: str) -> Price:
    """`--price`: a number (flat) or the path of a time-of-use CSV."""
    try:
        flat = float(text)
    except ValueError:
        return time_of_use(Path(text))
    if not flat >= 0 or flat == float("inf"):
        raise SpectopError(f"--price {text} is no price", _FIX)
    return Price((flat,) * 1440, f"flat {flat:g} per kWh")


def time_of_use(path: Path) -> Price:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SpectopError(f"--price {path}: cannot read it ({exc})", _FIX) from exc
    minutes: list[float | None] = [None] * 1440
    for number, fields in enumerate(csv.reader(lines), start=1):
        if not fields or fields[0].lstrip().startswith("#") or not "".join(fields).strip():
            continue
        span = _SPAN.match(fields[0])
        price = _number(fields[1]) if len(fields) == 2 else None
        if span is None or price is None:
            raise SpectopError(
                f"--price {path} line {number}: {','.join(fields)!r} is not HH:MM-HH:MM,price", _FIX
            )
        h0, m0, h1, m1 = (int(g) for g in span.groups())
        start, end = h0 * 60 + m0, h1 * 60 + m1
        if h0 > 24 or h1 > 24 or m0 > 59 or m1 > 59 or start > 1440 or end > 1440:
            raise SpectopError(f"--price {path} line {number}: {fields[0]!r} is no time of day", _FIX)
        span_minutes = range(start, end) if start < end else [*range(start, 1440), *range(0, end)]
        for minute in span_minutes:
            if minutes[minute] is not None:
                raise SpectopError(
                    f"--price {path} line {number}: {fields[0]!r} overlaps an earlier span", _FIX
                )
            minutes[minute] = price
    if None in minutes:
        gap = minutes.index(None)
        raise SpectopError(f"--price {path}: no price at {gap // 60:02d}:{gap % 60:02d}", _FIX)
    return Price(tuple(m for m in minutes if m is not None), f"time of use from {path.name}")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value < float("inf") else None
