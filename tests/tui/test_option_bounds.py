"""Numeric options: anything a user can type is a value in range or one line naming the option, exit 2.

Property-based: hypothesis types text, floats (NaN, infinities, subnormals, 1e308) and integers
of any size at every numeric option of every command, and the parse either gives a finite value
within the option's documented range or stops with a SpectopError naming the option; never a
traceback, never a value that makes a sweep sleep for ever or a server refuse the request.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from collectors.errors import SpectopError
from collectors.sweep import plan
from tests.support.cli_runs import one_line, spectop
from tui import cli

URL = "http://127.0.0.1:9"
# command line before the option, option, whole number or not, lowest, highest, lowest excluded
OPTIONS = [
    (["sweep", "--plain", URL, "--draft", URL], "--tokens", True, 2, plan.MAX_TOKENS, False),
    (["sweep", "--plain", URL, "--draft", URL], "--passes", True, 1, plan.MAX_PASSES, False),
    (["sweep", "--plain", URL, "--draft", URL], "--idle", False, 0.0, plan.MAX_IDLE_S, False),
    (["probe"], "--tokens", True, 1, plan.MAX_TOKENS, False),
    (["snapshot"], "--window", False, 0.0, 86_400.0, False),
    (["export"], "--window", False, 0.0, 86_400.0, True),
    (["export"], "--interval", False, 0.01, 3600.0, False),
    (["dashboard"], "--interval", False, 0.01, 3600.0, False),
    (["demo"], "--port", True, 0, 65533, False),
    (["demo"], "--seed", True, 0, 2**32 - 1, False),
    (["demo"], "--speedup", False, 0.0, 1000.0, True),
    (["demo"], "--phase", False, 0.0, 86_400.0, True),
    (["demo"], "--tokens", True, 1, plan.MAX_TOKENS, False),
    (["demo"], "--duration", False, 0.0, 365 * 86_400.0, False),
]
DEST = {"--tokens": "tokens", "--passes": "passes", "--idle": "idle", "--window": "window"}

typed = st.one_of(
    st.text(max_size=30),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e999", "-0", "0x10", "1_000", " 7 ", "", "1e-320", "２"]),
)


def parsed(argv: list[str], option: str):
    args = cli.parse(argv)
    return getattr(args, option.lstrip("-").replace("-", "_"))


@pytest.mark.slow
@pytest.mark.parametrize(("prefix", "option", "whole", "low", "high", "above"), OPTIONS, ids=lambda v: str(v))
@settings(max_examples=60)
@given(text=typed)
@example(text="--")  # argparse before 3.12 read `--window=--` as an empty list, never typed
def test_any_typed_value_is_in_range_or_one_line_naming_the_option(
    prefix, option, whole, low, high, above, text
):
    try:
        value = parsed([*prefix, f"{option}={text}"], option)
    except SpectopError as exc:
        assert option in exc.what and "\n" not in str(exc) and exc.fix.startswith(f"e.g. {option} ")
        return
    assert isinstance(value, int) if whole else isinstance(value, float)
    assert math.isfinite(value) and (value > low if above else value >= low) and value <= high


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--plain", URL, "--draft", URL, "--meter", "none", "--idle", "nan"],
        ["sweep", "--plain", URL, "--draft", URL, "--meter", "none", "--tokens", "10000000000"],
        ["sweep", "--plain", URL, "--draft", URL, "--meter", "none", "--passes=-3"],
        ["sweep", "--plain", URL, "--draft", URL, "--meter", "none", "--batches", "1,2,99999999999"],
        ["demo", "--serve-only", "--speedup", "inf"],
        ["demo", "--serve-only", "--port", "99999"],
        ["export", "--meter", "none", "--window", "0"],
        ["--interval", "1e999"],  # the dashboard's own option, typed with no command
    ],
)
def test_absurd_numbers_stop_at_once_with_one_line(argv):
    proc = spectop(*argv, timeout_s=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_line(proc.stderr).startswith("spectop: --")


@settings(max_examples=100)
@given(
    text=st.one_of(
        st.text(max_size=40), st.lists(st.integers(), max_size=80).map(lambda v: ",".join(map(str, v)))
    )
)
def test_any_batches_are_a_plan_or_one_line(text):
    try:
        batches = plan.parse_batches(text)
        sweep_plan = plan.SweepPlan(batches=batches)
    except SpectopError as exc:
        assert "--batches" in exc.what and "\n" not in str(exc)
        return
    assert 1 <= len(sweep_plan.batches) <= plan.MAX_BATCHES
    assert all(1 <= b <= plan.MAX_BATCH for b in sweep_plan.batches)


def test_the_engine_refuses_what_the_command_line_would():
    for bad in (
        {"idle_s": math.nan},
        {"idle_s": -1.0},
        {"max_tokens": 10**9},
        {"passes": 0},
        {"batches": (0,)},
    ):
        with pytest.raises(SpectopError):
            plan.SweepPlan(**bad)  # the dashboard's sweep dialog builds plans too
