"""The numbers inside a `--meter` spec (a remote page's `?period=`, `estimate=`'s TDP): anything typed
is a finite value in range or one MeterUnavailable line naming it, never NaN, infinity or a
negative reaching the staleness, quantization and power bounds that the meter checks rest on.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.errors import MeterUnavailable
from collectors.meters import specs
from collectors.meters.remote import MAX_PERIOD_S, period_option

typed = st.one_of(
    st.text(max_size=20),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e999", "0", "-0", "0s", "1e-320", "3600.5", "30s"]),
)


@settings(max_examples=150)
@given(text=typed)
def test_any_period_is_in_range_or_one_line(text):
    try:
        period_s = period_option({"period": text}, default_s=30.0)
    except MeterUnavailable as exc:
        assert "bad period" in exc.what and "\n" not in str(exc)
        return
    assert math.isfinite(period_s) and 0 < period_s <= MAX_PERIOD_S


@settings(max_examples=150)
@given(text=typed)
def test_any_tdp_is_in_range_or_one_line(text):
    try:
        tdp_w = specs._tdp(text)
    except MeterUnavailable as exc:
        assert "bad TDP" in exc.what and "\n" not in str(exc)
        return
    assert tdp_w is None if not text else (math.isfinite(tdp_w) and 0 < tdp_w <= specs.MAX_TDP_W)


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "0", "1e999"])
def test_absurd_periods_and_tdps_are_refused(text):
    with pytest.raises(MeterUnavailable, match="bad period"):
        period_option({"period": text}, default_s=30.0)
    with pytest.raises(MeterUnavailable, match="bad TDP"):
        specs.open_meter(f"estimate={text}")
