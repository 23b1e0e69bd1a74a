"""Estimate meter: its own cpu_times baseline, CodeCarbon's cubic model, always labelled an estimate."""

from __future__ import annotations

from collections import namedtuple

import psutil
import pytest

from collectors.meters.estimate import EstimateMeter, guess_tdp_w
from tests.support.meter_fakes import FakeClock

# Field order of psutil's Linux scputimes.
CpuTimes = namedtuple(
    "CpuTimes", "user nice system idle iowait irq softirq steal guest guest_nice", defaults=(0.0,) * 6
)


class FakeCpu:
    """Cumulative CPU seconds over `cpus` CPUs; `run(dt, load)` spends them busy or idle."""

    def __init__(self, cpus: int = 4) -> None:
        self.cpus = cpus
        self.t = CpuTimes(1000.0, 0.0, 500.0, 9000.0)

    def run(self, dt_s: float, load: float, guest_share: float = 0.0, iowait_share: float = 0.0) -> None:
        total = dt_s * self.cpus
        busy, idle = total * load, total * (1 - load)
        t = self.t
        # Linux counts guest time inside user time too: it must not count twice.
        self.t = t._replace(
            user=t.user + busy,
            idle=t.idle + idle * (1 - iowait_share),
            iowait=t.iowait + idle * iowait_share,
            guest=t.guest + busy * guest_share,
        )


@pytest.fixture
def cpu(monkeypatch):
    fake = FakeCpu()
    monkeypatch.setattr(psutil, "cpu_times", lambda percpu=False: fake.t)

    def no_cpu_percent(*a, **k):  # one shared baseline per process: must not be used
        raise AssertionError("cpu_percent used")

    monkeypatch.setattr(psutil, "cpu_percent", no_cpu_percent)
    return fake


@pytest.mark.parametrize("load", [0.0, 0.25, 0.5, 1.0])
def test_codecarbon_cubic_model(cpu, load):
    clock = FakeClock()
    meter = EstimateMeter(tdp_w=100.0, clock=clock)
    meter.read()
    start = meter.read().energy_j
    for _ in range(10):
        cpu.run(0.5, load, guest_share=0.5, iowait_share=0.3)
        clock.advance(0.5)
        r = meter.read()
    want_w = 100.0 * (0.1 + 0.9 * load**3)
    assert r.power_w == pytest.approx(want_w)
    assert r.energy_j - start == pytest.approx(want_w * 5.0)


def test_load_is_the_mean_over_each_read_interval(cpu):
    clock = FakeClock()
    coarse, fine = EstimateMeter(tdp_w=200.0, clock=clock), EstimateMeter(tdp_w=200.0, clock=clock)
    cpu.run(1.0, 1.0)
    clock.advance(1.0)
    fine.read()
    cpu.run(1.0, 0.0)
    clock.advance(1.0)
    # Read once over both seconds: mean load 0.5. Read each second: 1.0 then 0.0 (the model is convex).
    assert coarse.read().energy_j == pytest.approx(200.0 * (0.1 + 0.9 * 0.5**3) * 2.0)
    assert coarse.load == pytest.approx(0.5)
    assert fine.read().energy_j == pytest.approx(200.0 + 20.0)


def test_always_labelled_an_estimate(cpu):
    meter = EstimateMeter(model="AMD EPYC 7763 64-Core Processor", threads=128)
    info = meter.info
    assert info.method == "estimate" and info.name == "estimate"
    assert "estimate" in info.boundary
    assert "CodeCarbon" in info.detail and "280 W" in info.detail
    assert info.power_limit_w == 280.0
    assert any("not a measurement" in n for n in info.notes)


def test_tdp_guess():
    assert guess_tdp_w("Intel(R) Core(TM) i9-13900K", 32)[0] == 125.0
    tdp_w, why = guess_tdp_w("Some Future CPU", 12)
    assert tdp_w == 48.0 and "12 threads" in why
