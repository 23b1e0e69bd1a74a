"""Property tests for every parser of meter data: `macmon pipe` lines, dcgm-exporter and
node_exporter samples, and the remote totals built from them. Whatever a meter sends, a parser
skips what it cannot read and keeps its joules a finite number that never runs back."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from collectors.meters.macmon import MacmonIntegrator
from collectors.meters.remote import DCGM_ENERGY, DCGM_POWER, RemoteTotals, dcgm_series, node_rapl_series
from collectors.promtext import Sample

pytestmark = pytest.mark.slow  # property tests: hundreds of generated lines and pages

ANY_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1e308, -1e308, 5e-324]),
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | ANY_NUMBER | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
# mostly macmon's own shape (all_power, sys_power, timestamp) with any values, else anything at all
MACMON_LINE = st.one_of(
    st.fixed_dictionaries(
        {"all_power": ANY_JSON},
        optional={
            "sys_power": ANY_JSON,
            "timestamp": st.one_of(ANY_JSON, st.just("2026-11-30T20:38:15.427569+00:00")),
        },
    ).map(lambda d: json.dumps(d, allow_nan=True)),
    st.text(max_size=40),
)


@settings(max_examples=300)
@given(st.lists(MACMON_LINE, max_size=12))
# found by a run: watts near the float limit over a 1.8 s gap made the joules inf, for good
@example(['{"all_power": 0.5}'] + [""] * 8 + ['{"all_power": 9.987184082568422e+307}'])
@example(['{"all_power": 0.5}'] + [""] * 8 + ['{"all_power": 1.0, "sys_power": 9.987184082568422e+307}'])
def test_macmon_lines_never_raise_and_keep_joules_finite_and_rising(lines):
    meter = MacmonIntegrator(0.2)
    last = 0.0
    for i, line in enumerate(lines):
        assert meter.feed(line, 0.2 * i) in (True, False)
        assert math.isfinite(meter.soc_j) and meter.soc_j >= last
        assert math.isfinite(meter.system_j) and meter.system_j >= 0
        last = meter.soc_j


def test_a_macmon_line_of_impossible_watts_is_skipped():
    meter = MacmonIntegrator(0.2)
    assert meter.feed('{"all_power": 10.0}', 0.0)
    for bad in (
        '{"all_power": NaN}', '{"all_power": Infinity}', '{"all_power": -3.0}', '{"all_power": "x"}',
        '{"all_power": false}',  # JSON false is no number (Python's bool is an int)
    ):  # fmt: skip
        assert meter.feed(bad, 0.2) is False
    assert meter.soc_j == 10.0 * 0.2 and meter.bad_lines == 5


LABELS = st.dictionaries(
    st.sampled_from(
        ["UUID", "gpu", "Hostname", "hostname", "instance", "modelName", "GPU_I_ID", "path", "x"]
    ),
    st.text(max_size=12),
    max_size=5,
)
NAMES = st.sampled_from(
    [DCGM_ENERGY, DCGM_POWER, "node_rapl_package_joules_total", "node_rapl_dram_joules_total", "other_total"]
)
SAMPLES = st.lists(
    st.builds(Sample, NAMES, LABELS, st.floats(allow_nan=True, allow_infinity=True)), max_size=8
)


@settings(max_examples=300)
@given(st.lists(SAMPLES, min_size=1, max_size=5), st.one_of(st.none(), st.text(max_size=6)))
def test_exporter_pages_give_finite_series_and_totals_that_never_run_back(scrapes, host):
    for parse in (dcgm_series, node_rapl_series):
        totals, last = RemoteTotals(), 0.0
        for i, scrape in enumerate(scrapes):
            series = parse(scrape, host)
            for s in series:  # a NaN or infinite sample is no data, never a figure
                assert s.energy_j is None or math.isfinite(s.energy_j)
                assert s.power_w is None or math.isfinite(s.power_w)
            reading = totals.update(1.0 + i, series)
            assert not math.isnan(reading.energy_j) and reading.energy_j >= last
            last = reading.energy_j
