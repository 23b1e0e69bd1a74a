"""How spectop writes a number for people: one style for every table, panel and report.

Plain strings (no markup), so the CLI, the dashboard and the saved Markdown summary agree.
"""

from __future__ import annotations

MISSING = "—"


def num(value: float | None, spec: str = ".1f", unit: str = "") -> str:
    """`value` in format `spec` followed by `unit`, or an em dash when there is none."""
    return MISSING if value is None else f"{value:{spec}}{unit}"


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as a percentage with a space before the sign: 0.483 → "48 %"."""
    return MISSING if value is None else f"{100 * value:.{digits}f} %"
