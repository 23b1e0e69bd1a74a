"""How spectop writes a number for people, and how it shows text a server sent.

Plain strings (no markup), so the CLI, the dashboard and the saved Markdown summary agree.

Pitfalls handled: server text is untrusted, and Rich and Textual escape markup but not control
characters, so an ESC from a model name could retitle the terminal, set its clipboard (OSC 52)
or clear it; `printable` makes every C0 and C1 control character and DEL visible, and a lone
surrogate (valid in JSON, unencodable on a UTF-8 terminal) too. `number_in` reads a number a
person typed (an option, a meter spec) only when it is finite and in range: NaN compares false
with everything, so a bound written as `not value > high` would let it through.
"""

from __future__ import annotations

import math

MISSING = "—"


def number_in(text: str, low: float, high: float, *, above_low: bool = False) -> float | None:
    """`text` as a finite number from `low` (or above it, `above_low`) to `high`; None otherwise."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if not (math.isfinite(value) and (value > low if above_low else value >= low) and value <= high):
        return None
    return value


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _shown(code: int) -> str:
    return _NAMED.get(chr(code)) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


# C0, DEL and C1 (Unicode's Cc), then the surrogates, each as the escape Python would write
_CONTROLS = {code: _shown(code) for code in (*range(0x20), *range(0x7F, 0xA0), *range(0xD800, 0xE000))}
_CONTROLS_BUT_NEWLINE = {code: shown for code, shown in _CONTROLS.items() if code != 0x0A}


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control character written as its escape: ESC as `\\x1b`, a C1 CSI as `\\x9b`.

    Escapes rather than U+2400 control pictures: C1 characters have no picture, and `\\x1b` is
    ASCII, so it reads the same in every font, log and pasted bug report. A one-line field shows
    tab and newline escaped too; `keep_newlines` keeps the line breaks of a multi-line text (a
    server's log tail).
    """
    return text.translate(_CONTROLS_BUT_NEWLINE if keep_newlines else _CONTROLS)


def num(value: float | None, spec: str = ".1f", unit: str = "") -> str:
    """`value` in format `spec` followed by `unit`, or an em dash when there is none."""
    return MISSING if value is None else f"{value:{spec}}{unit}"


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as a percentage with a space before the sign: 0.483 → "48 %"."""
    return MISSING if value is None else f"{100 * value:.{digits}f} %"
