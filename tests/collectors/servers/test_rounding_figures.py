"""How far a rounded llama-server counter read may be off, worked by hand (reference/llama_server.md §1.2)."""

from __future__ import annotations

import math

from collectors.servers import rounding


def test_six_digit_reads_are_exact_below_a_million_and_off_by_half_a_last_digit_above():
    assert rounding.read_error(999_999.0, 6) == 0.0  # prints in full
    assert rounding.read_error(1e6, 6) == 5.0  # prints "1e+06": anything in [999 995, 1 000 005)
    assert rounding.read_error(1_234_570.0, 6) == 5.0  # "1.23457e+06": an integer, but the 7th digit is gone
    assert rounding.read_error(2.00042e7, 6) == 50.0
    assert rounding.read_error(0.5, 6) == 0.5 * 10.0**-6  # a fraction: half of the 6th significant digit


def test_no_error_without_a_value_digits_or_a_finite_read():
    assert rounding.read_error(None, 6) == 0.0
    assert rounding.read_error(0.0, 6) == 0.0
    assert rounding.read_error(1_234_570.0, None) == 0.0  # a dialect that prints in full
    assert rounding.read_error(math.inf, 6) == 0.0
    assert rounding.read_error(math.nan, 6) == 0.0


def test_tolerance_rounds_the_error_up_to_whole_tokens():
    assert rounding.tolerance(0.0) == 0
    assert rounding.tolerance(0.5) == 1  # half a token may still be a token off
    assert rounding.tolerance(10.0) == 10  # two reads ± 5 each: 10, not 11
