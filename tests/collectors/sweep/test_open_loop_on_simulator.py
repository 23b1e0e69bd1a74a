"""Open-loop points on the simulator: the concurrency a sweep reports is the one its arrivals imply.

Little's law, L = λ·W: requests arriving at λ per second that each spend W seconds in the system
have λ·W in flight on average. On a point's finite window (its start to its last completion, T
seconds) the law is exact with the window's own rate, λ = N / T: the sweep's time-average of its
requests in flight (open_loop.in_flight) must equal N·W / T, W each request's own send-to-last-token
time averaged by this test from the point's records. The window's rate is the offered one up to the
window's ends: its sends kept the plan's schedule (no `late-sends` code), so T is the offered span
N / rate, less the gap the plan leaves after the last send, plus however long the last request took.
A loaded machine stretches that last request (CI saw 0.23 s where the mean was 0.04 s, 6 % of a
3.75 s point), so the bound on T allows the slowest request, not a fixed share.

Bursty arrivals (gamma gaps, CV 3) bring requests in clumps: at the same rate, more of them are in
flight at once than Poisson arrivals ever put there.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import pytest

from collectors.meters import Sampler, open_meter
from collectors.requests.record import RequestRecord
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.events import PointDone, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.point import SweepPoint
from collectors.sweep.records import PairedSummary
from collectors.sweep.runner import run_sweep

pytestmark = pytest.mark.slow  # about a minute of simulated serving

SPEEDUP = 16.0  # token rates ×16: a point of 120 requests at 32/s lasts 4 s
TOKENS = 24
REQUESTS = 120


@dataclass(frozen=True)
class Swept:
    points: list[tuple[SweepPoint, tuple[RequestRecord, ...]]]
    summary: PairedSummary


def _sweep(tmp_path, rates: tuple[float, ...], arrivals: str) -> Swept:
    with Simulator(seed=5, speedup=SPEEDUP) as sim:
        meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
        plan = SweepPlan(
            batches=(),
            rates=rates,
            arrivals=arrivals,
            rate_requests=REQUESTS,
            max_tokens=TOKENS,
            passes=1,
            idle_s=0.5,
            warmup_tokens=4,
        )
        arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
        with Sampler(meter) as sampler:
            events = list(run_sweep(plan, arms, sampler, tmp_path))
        meter.close()
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    assert isinstance(ended.summary, PairedSummary)
    return Swept([(e.row, e.records) for e in events if isinstance(e, PointDone)], ended.summary)


@pytest.fixture(scope="module")
def poisson(tmp_path_factory) -> Swept:
    return _sweep(tmp_path_factory.mktemp("poisson"), (16.0, 32.0), "poisson")


def test_a_poisson_point_has_the_concurrency_little_s_law_gives(poisson):
    assert len(poisson.points) == 6
    # a point whose client could not keep the schedule (a stalled machine) says so: its traffic was
    # not the offered one; every rate has points that kept it
    kept = [(row, records) for row, records in poisson.points if "late-sends" not in row.codes]
    assert {row.rate_rps for row, _ in kept} == {16.0, 32.0}
    for row, records in kept:
        assert row.load is not None and row.in_flight is not None and len(records) == REQUESTS
        waits_s = [r.t_done_s - r.t_send_s for r in records]
        window_s = sum(row.in_flight.seconds)
        assert row.in_flight.mean == pytest.approx(REQUESTS / window_s * statistics.fmean(waits_s), rel=1e-4)
        offered_s = REQUESTS / row.load.rate_rps
        assert 0.95 * offered_s <= window_s <= offered_s + max(waits_s) + 0.05, row.load
        assert row.in_flight.p50 <= row.in_flight.p90 <= row.in_flight.maximum <= REQUESTS


def test_the_summary_reads_each_rate_at_plain_s_achieved_concurrency(poisson):
    open_loop = poisson.summary.open_loop
    assert open_loop is not None and poisson.summary.rows == ()
    assert [t.rate_rps for t in open_loop.rows] == [16.0, 32.0]
    # the pooled mean of a rate's trusted plain points lies between theirs; more traffic, more in flight
    low, high = (t.plain_in_flight.mean for t in open_loop.rows)
    assert 0 < low < high
    for t in open_loop.rows:
        plain = [r.in_flight.mean for r, _ in poisson.points if r.arm == "plain" and r.rate_rps == t.rate_rps]
        assert min(plain) <= t.plain_in_flight.mean <= max(plain)


def test_bursty_arrivals_put_more_requests_in_flight_at_once(poisson, tmp_path):
    bursty = _sweep(tmp_path, (32.0,), "bursty:3")
    for arm, phase in (("plain", "before"), ("draft", "")):
        calm = next(r for r, _ in poisson.points if (r.rate_rps, r.arm, r.phase) == (32.0, arm, phase))
        clumped = next(r for r, _ in bursty.points if (r.arm, r.phase) == (arm, phase))
        assert clumped.load is not None and clumped.load.arrivals == "bursty:3"
        assert clumped.in_flight.maximum > calm.in_flight.maximum
