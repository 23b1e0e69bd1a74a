"""A point's energy figures and the idle baseline: what the meter did not cover is no value.

Known truth: a scripted counter meter at a constant power, so a window's joules are power × seconds.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler, WindowEnergy
from collectors.sweep import summary
from collectors.sweep.arms import make_arms
from collectors.sweep.checks import idle_flag
from collectors.sweep.codec import to_json
from collectors.sweep.measure import energy_fields
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.session import SweepSession
from tests.support.streaming import run_with

POWER_W = 30.0


class Scripted:
    def __init__(self, readings, period_s=0.01) -> None:
        self.readings = list(readings)
        self.info = MeterInfo("scripted", ("x",), "test", "counter", period_s)

    def read(self) -> MeterReading:
        return self.readings.pop(0)

    def close(self) -> None:
        pass


def constant_power(t0_s: float, t1_s: float, period_s: float = 0.01) -> Sampler:
    """A sampler holding two readings of a POWER_W counter at t0_s and t1_s, and no thread."""
    sampler = Sampler(
        Scripted([MeterReading(t0_s, 0.0), MeterReading(t1_s, POWER_W * (t1_s - t0_s))], period_s),
        rate_hz=1 / period_s,
    )
    sampler.tick()
    sampler.tick()
    sampler.stop()  # no thread: a wait for a later sample returns at once
    return sampler


def window_energy(covered=True, short=False, energy_j=50.0) -> WindowEnergy:
    return WindowEnergy(energy_j, 100.0, 102.5, 25, covered, short, "counter", 0.1)


def test_energy_fields_of_a_covered_window():
    # 50 J over 2.5 s for 100 tokens, idle 4 W: 20 W, 500 mJ/token, net 50 - 4 x 2.5 = 40 J
    fields = to_json(energy_fields(window_energy(), 2.5, 100, 4.0))
    assert fields["energy_j"] == 50.0 and fields["energy_covered"]
    assert fields["power_w"] == pytest.approx(20.0) and fields["mj_per_token"] == pytest.approx(500.0)
    assert fields["net_energy_j"] == pytest.approx(40.0) and fields["net_mj_per_token"] == pytest.approx(
        400.0
    )


def test_an_uncovered_window_keeps_its_lower_bound_but_derives_nothing_from_it():
    fields = to_json(energy_fields(window_energy(covered=False), 2.5, 100, 4.0))
    assert fields["energy_j"] == 50.0 and fields["energy_covered"] is False
    assert fields["power_w"] is None and fields["mj_per_token"] is None
    assert fields["net_energy_j"] is None and fields["net_mj_per_token"] is None
    assert energy_fields(None, 2.5, 100, 4.0).energy_j is None


def test_idle_flags():
    assert idle_flag(window_energy()) is None
    assert idle_flag(window_energy(covered=False)).code == "idle-meter-gap"
    short = idle_flag(window_energy(short=True))
    assert short.code == "idle-short" and "2.50 s idle window" in short.message


def sweep(tmp_path, sampler=None, idle_s=0.0) -> SweepSession:
    arms = make_arms(plain_url="http://127.0.0.1:9", draft_url="http://127.0.0.1:10")
    return SweepSession(SweepPlan(max_tokens=48, idle_s=idle_s), arms, sampler, tmp_path, lambda: False, None)


def test_an_idle_window_the_meter_covers_is_the_baseline(tmp_path):
    now = time.monotonic()
    power_w, flag = sweep(tmp_path, constant_power(now - 1.0, now + 10.0), idle_s=0.15).measure_idle()
    assert flag is None and power_w == pytest.approx(POWER_W)


@pytest.mark.parametrize(
    ("readings_from", "readings_to", "period_s", "code"),
    [
        (-1.0, 0.05, 0.01, "idle-meter-gap"),  # the samples stop inside the idle window
        (-1.0, 10.0, 0.1, "idle-short"),  # 0.15 s is under 10 periods of 0.1 s
    ],
)
def test_an_idle_window_that_is_no_baseline_gives_none(tmp_path, readings_from, readings_to, period_s, code):
    now = time.monotonic()
    sampler = constant_power(now + readings_from, now + readings_to, period_s)
    power_w, flag = sweep(tmp_path, sampler, idle_s=0.15).measure_idle()
    assert power_w is None and flag.code == code


async def test_point_rows_carry_energy_over_the_marked_window_and_every_gap(tmp_path):
    window = await run_with(None)  # two streamed requests of 48 tokens
    t0, t1 = window.t0_s, window.t1_s
    run = sweep(tmp_path, constant_power(t0 - 1.0, t1 + 1.0))
    run.idle_w = 10.0
    point = run.point_row(0, PointKey(0, 2, "draft"), window)
    row = to_json(point)
    seconds = t1 - t0
    assert row["energy_window_s"] == pytest.approx(seconds)
    assert row["energy_j"] == pytest.approx(POWER_W * seconds) and row["power_w"] == pytest.approx(POWER_W)
    assert row["mj_per_token"] == pytest.approx(1000 * POWER_W * seconds / 96)
    assert row["net_energy_j"] == pytest.approx((POWER_W - 10.0) * seconds)
    # the samples behind the pooled tails: one point pooled is that point's own percentile
    assert len(row["chunk_gaps_ms"]) > 40
    assert float(np.percentile(row["chunk_gaps_ms"], 95)) == pytest.approx(row["chunk_gap_ms_p95"], abs=0.001)
    assert summary.aggregate([point]).chunk_gap_ms_p95 == pytest.approx(row["chunk_gap_ms_p95"], abs=0.001)


async def test_a_point_the_meter_did_not_cover_has_no_watts_or_mj(tmp_path):
    window = await run_with(None)
    run = sweep(tmp_path, constant_power(window.t0_s - 1.0, (window.t0_s + window.t1_s) / 2))
    row = to_json(run.point_row(0, PointKey(0, 2, "draft"), window))
    assert row["energy_covered"] is False and row["energy_j"] > 0
    assert row["power_w"] is None and row["mj_per_token"] is None
    assert "meter-gap" in {f["code"] for f in row["flags"]}
