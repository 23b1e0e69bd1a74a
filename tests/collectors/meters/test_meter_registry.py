"""Adding a meter is its module plus one entry in `specs.METERS`: parsing, `auto`, opening and sampling follow."""

from __future__ import annotations

import time

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters import sampling, specs
from collectors.meters.base import MeterInfo, MeterReading


class ToyMeter:
    """A constant-power source: energy grows by `power_w` joules per second of the monotonic clock."""

    def __init__(self, power_w: float) -> None:
        self.power_w = power_w
        self.t0_s = time.monotonic()
        self.info = MeterInfo("toy", ("toy board",), "toy board", "counter", 0.01)
        self.closed = False

    def read(self) -> MeterReading:
        t_s = time.monotonic()
        return MeterReading(t_s, self.power_w * (t_s - self.t0_s), self.power_w)

    def close(self) -> None:
        self.closed = True


TOY = specs.MeterKind("toy", "[=W]", "a constant-power toy", True, lambda a: ToyMeter(float(a or 5)))


@pytest.fixture
def with_toy(monkeypatch):
    monkeypatch.setattr(specs, "METERS", (TOY, *specs.METERS))


def test_an_unregistered_meter_is_rejected():
    with pytest.raises(MeterUnavailable, match="unknown meter 'toy=7'"):
        specs.parse_spec("toy=7")


def test_one_entry_makes_a_meter_parse_open_and_lead_auto(with_toy):
    assert specs.parse_spec("toy=7") == ("toy", "7")
    named = specs.open_meter("toy=7")
    assert isinstance(named, ToyMeter) and named.power_w == 7.0
    chosen = specs.choose_meter("auto")  # first local entry: auto tries it before every other source
    assert isinstance(chosen.meter, ToyMeter) and [r.name for r in chosen.results] == ["toy"]


def test_one_entry_makes_a_meter_sample(with_toy):
    with sampling("toy=40") as sampler:
        time.sleep(0.3)
        t1 = time.monotonic() - 0.05
        window = sampler.energy_between(t1 - 0.2, t1, wait_s=1.0)
    assert window.energy_j == pytest.approx(40 * 0.2, rel=0.01)
    assert sampler.meter.closed


def test_the_help_lists_every_entry_with_its_argument():
    for kind in specs.METERS:
        assert (f"{kind.name}{kind.argument}", kind.description) in specs.METER_SPECS
    assert specs.AUTO_ORDER == tuple(m.name for m in specs.METERS if m.local)
