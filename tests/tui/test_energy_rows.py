"""probe and snapshot energy: a window the meter did not cover is a lower bound, said as one.

Known truth: a scripted 40 W counter read at t = 10 s and 11 s.
"""

from __future__ import annotations

import pytest

from collectors.export.json_forms import energy_dict
from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler
from tui.commands._common import energy_rows


class Scripted:
    def __init__(self, readings) -> None:
        self.readings = list(readings)
        self.info = MeterInfo("scripted", ("x",), "test board", "counter", 0.01)

    def read(self) -> MeterReading:
        return self.readings.pop(0)

    def close(self) -> None:
        pass


@pytest.fixture
def sampler() -> Sampler:
    s = Sampler(Scripted([MeterReading(10.0, 0.0), MeterReading(11.0, 40.0)]), rate_hz=100)
    s.tick()
    s.tick()
    s.stop()  # no thread: waiting for a later sample returns at once
    return s


def test_a_covered_window_gives_watts_and_mj_per_token(sampler):
    energy = energy_dict(sampler, 10.25, 10.75, 100)  # 20 J over 0.5 s, 100 tokens
    assert energy["covered"] and energy["energy_j"] == pytest.approx(20.0)
    assert energy["power_w"] == pytest.approx(40.0) and energy["mj_per_token"] == pytest.approx(200.0)
    rows = dict(energy_rows(energy))
    assert rows["power"] == "40.0 W over 0.50 s" and rows["mJ/token"] == "200"


def test_an_uncovered_window_is_a_lower_bound_with_no_derived_figures(sampler):
    energy = energy_dict(sampler, 10.5, 12.0, 100)  # the samples cover 10.5-11.0 only: 20 J of more
    assert not energy["covered"] and energy["energy_j"] == pytest.approx(20.0)
    assert energy["power_w"] is None and energy["mj_per_token"] is None
    rows = dict(energy_rows(energy))
    assert rows["energy"] == "≥ 20.0 J, the meter did not cover the 1.50 s window"
    assert rows["mJ/token"] == "—" and "power" not in rows
