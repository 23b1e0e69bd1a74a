"""The energy ledger over a period: kWh, tokens, mJ/token, the share of time drafting paid, what a
schedule would have saved, the cost, and mJ/token at each batch level (collectors/docs/figures.md).

Every ratio is a ratio of sums (collectors/docs/energy-ledger.md, Eq. 3): mJ/token divides the
joules of the windows that produced tokens by their tokens; idle windows' joules count in kWh and
cost but not in mJ/token (they have no tokens to carry them), and are shown on their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collectors.energy import ledger

if TYPE_CHECKING:  # the report's printing loads without SQLite
    from collectors.ledgerdb.prices import Price
    from collectors.ledgerdb.store import HourRow

J_PER_KWH = 3.6e6


@dataclass(frozen=True, slots=True)
class Level:
    """The period's sums at one batch level (0: idle windows)."""

    batch_level: int
    seconds: float
    energy_j: float
    tokens: int

    @property
    def mj_per_token(self) -> float | None:
        return ledger.mj_per_token(self.energy_j, self.tokens) if self.tokens else None


@dataclass(frozen=True, slots=True)
class LedgerSummary:
    servers: tuple[str, ...]
    first_unix_s: float | None  # the first hour with a row, and the end of the last
    last_unix_s: float | None
    seconds: float  # recorded seconds, summed over servers
    energy_j: float
    tokens: int
    drafted: int
    accepted: int
    drafting_s: float
    judged_s: float
    paid_s: float
    saving_j: float
    levels: tuple[Level, ...]
    cost: float | None = None
    price: str | None = None

    @property
    def kwh(self) -> float:
        return self.energy_j / J_PER_KWH

    @property
    def idle_j(self) -> float:
        return sum(level.energy_j for level in self.levels if level.batch_level == 0)

    @property
    def mj_per_token(self) -> float | None:
        return ledger.mj_per_token(self.energy_j - self.idle_j, self.tokens) if self.tokens else None

    @property
    def acceptance(self) -> float | None:
        return ledger.acceptance(self.drafted, self.accepted)

    @property
    def paid_share(self) -> float | None:
        """Of the drafting seconds a sweep's curves could judge, the share where drafting saved energy."""
        return self.paid_s / self.judged_s if self.judged_s else None


def local_minute_of_day(unix_s: int) -> int:
    moment = time.localtime(unix_s)
    return moment.tm_hour * 60 + moment.tm_min


def summarize(
    rows: Sequence[HourRow],
    price: Price | None = None,
    minute_of_day: Callable[[int], int] = local_minute_of_day,
) -> LedgerSummary:
    """Sum the rows; `minute_of_day` maps an hour's Unix start to its local minute of the day (pricing)."""
    by_level: dict[int, list[HourRow]] = {}
    for row in rows:
        by_level.setdefault(row.batch_level, []).append(row)
    levels = tuple(
        Level(level, sum(r.seconds for r in rs), sum(r.energy_j for r in rs), sum(r.tokens for r in rs))
        for level, rs in sorted(by_level.items())
    )
    cost = None
    if price is not None:
        cost = sum(r.energy_j / J_PER_KWH * price.of_hour(minute_of_day(r.hour_unix_s)) for r in rows)
    return LedgerSummary(
        servers=tuple(sorted({r.server for r in rows})),
        first_unix_s=min((r.hour_unix_s for r in rows), default=None),
        last_unix_s=max((r.hour_unix_s + 3600 for r in rows), default=None),
        seconds=sum(r.seconds for r in rows),
        energy_j=sum(r.energy_j for r in rows),
        tokens=sum(r.tokens for r in rows),
        drafted=sum(r.drafted for r in rows),
        accepted=sum(r.accepted for r in rows),
        drafting_s=sum(r.drafting_s for r in rows),
        judged_s=sum(r.judged_s for r in rows),
        paid_s=sum(r.paid_s for r in rows),
        saving_j=sum(r.saving_j for r in rows),
        levels=levels,
        cost=cost,
        price=price.described if price else None,
    )
