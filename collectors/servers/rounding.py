"""Counters printed with few significant digits: how far a read may be from the server's count,
and whether a window's delta of two such reads says anything.

Pitfalls handled (collectors/docs/servers.md, llama-server): llama-server writes its /metrics doubles with
a default C++ stream, 6 significant digits, so 1234567 reads `1.23457e+06` (±5) and a window of
19 drafted / 15 accepted tokens on a server past 2·10⁶ reads 10 or 20 of each: 50 % or 100 %
acceptance. A read is exact below 10⁶ (an integer prints in full); above, it is ± half its last
printed digit. A delta is kept only when that uncertainty is small against it (`TRUST_LIMIT`);
otherwise it is unknown, never a figure that looks exact.
"""

from __future__ import annotations

import math

LLAMA_DIGITS = 6  # std::stringstream's default precision
TRUST_LIMIT = 0.05  # a window delta may be off by at most 5 % of itself to be shown


def read_error(value: float | None, digits: int | None) -> float:
    """How far `value`, printed with `digits` significant digits, may be from the true count."""
    if value is None or digits is None or value == 0 or not math.isfinite(value):
        return 0.0
    if value.is_integer() and abs(value) < 10**digits:
        return 0.0  # an integer that fits the digits prints in full
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)


def trusted(delta: float | None, error: float) -> bool:
    """A window delta whose reads' uncertainty is at most `TRUST_LIMIT` of it (always when exact)."""
    return delta is not None and error <= TRUST_LIMIT * abs(delta)


def tolerance(error: float) -> int:
    """The whole tokens a delta may be off by (0 when exact)."""
    return math.ceil(error - 1e-9) if error > 0 else 0
