"""`printable`: no control character from a server survives, and nothing else changes."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from collectors.fmt import printable


def controls(text: str) -> list[str]:
    """Characters a terminal would act on or cannot encode: C0, DEL, C1 (Cc) and surrogates (Cs)."""
    return [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs")]


def test_terminal_attacks_are_shown_not_sent():
    # OSC 0 retitles the pane, OSC 52 sets the clipboard, CSI 2J clears the screen, 0x9b is C1 CSI
    assert printable("m\x1b]0;pwned\x07") == "m\\x1b]0;pwned\\x07"
    assert printable("\x1b]52;c;cHduZWQ=\x07") == "\\x1b]52;c;cHduZWQ=\\x07"
    assert printable("\x1b[2J") == "\\x1b[2J"
    assert printable("\x9b2J") == "\\x9b2J"
    assert printable("a\x7fb\x00c\x85") == "a\\x7fb\\x00c\\x85"


def test_a_one_line_field_shows_tab_newline_and_carriage_return():
    # a carriage return would let a server overwrite the start of the line it is shown on
    assert printable("ok\rFAIL\n\tx") == "ok\\rFAIL\\n\\tx"
    assert printable("line 1\nline 2\r", keep_newlines=True) == "line 1\nline 2\\r"


def test_a_lone_surrogate_is_shown_so_printing_never_fails():
    # JSON allows "\ud800"; writing it to a UTF-8 terminal would raise UnicodeEncodeError
    assert printable("a\ud800b") == "a\\ud800b"
    printable("a\ud800b").encode("utf-8")


def test_readable_text_is_left_alone():
    text = "Qwen2.5-7B-Instruct-Q4_K_M.gguf · ‘draft’ é ✓ 中文 [/x] [bold \\x1b"
    assert printable(text) == text


@given(st.text())
def test_no_control_character_survives(text):
    shown = printable(text)
    assert controls(shown) == []
    shown.encode("utf-8")  # every character can be written to the terminal


@given(st.text())
def test_newlines_kept_only_when_asked(text):
    assert controls(printable(text, keep_newlines=True)) == ["\n"] * text.count("\n")


@given(st.text())
def test_characters_that_are_not_controls_are_unchanged_and_in_order(text):
    # each control becomes its escape; removing them from both sides leaves the same text
    kept = "".join(ch for ch in text if not controls(ch))
    assert printable(kept) == kept
    assert printable(printable(text)) == printable(text)  # shown once, shown the same again
