"""Open-loop points' parts: the arrival times a rate offers, the requests in flight a window had,
and the plan that schedules them (collectors/sweep/open_loop.py, plan.py). Truths worked by hand
in the comments, or from the gamma and exponential laws the arrivals are drawn from."""

from __future__ import annotations

import math
import statistics

import pytest

from collectors.errors import SpectopError
from collectors.sweep import checks
from collectors.sweep.checks import point_flags
from collectors.sweep.open_loop import Arrivals, arrival_offsets_s, in_flight, parse_arrivals, pooled
from collectors.sweep.plan import SweepPlan, parse_rates
from collectors.sweep.store import point_problem
from tests.support.sweep_rows import as_point, note25_rows


def test_in_flight_is_the_time_spent_at_each_level_over_the_window():
    # window [0, 4]; requests 0–1, 0.5–2, 2.5–3, one sent before the window and done at 0.25 (only
    # its last 0.25 s count) and one sent after it (not counted):
    #   [0, 0.25): 2 (the early one and 0–1)  [0.25, 0.5): 1  [0.5, 1): 2  [1, 2): 1  [2, 2.5): 0
    #   [2.5, 3): 1  [3, 4]: 0
    # seconds at 0: 0.5 + 1 = 1.5; at 1: 0.25 + 1 + 0.5 = 1.75; at 2: 0.25 + 0.5 = 0.75
    spans = [(0.0, 1.0), (0.5, 2.0), (2.5, 3.0), (-1.0, 0.25), (4.5, 5.0)]
    got = in_flight((s for s in spans), 0.0, 4.0)  # read once, as the sweep hands them over
    assert got.seconds == pytest.approx((1.5, 1.75, 0.75))
    assert got.mean == pytest.approx((1.75 + 2 * 0.75) / 4)  # 0.8125
    # time-weighted: half the window (2 s) is reached within level 1 (1.5 + 1.75), 90 % (3.6 s) at 2
    assert (got.p50, got.p90, got.maximum) == (1, 2, 2)


def test_a_completion_and_a_send_at_the_same_instant_never_count_two_in_flight():
    # back to back: one request in flight all along, never two
    got = in_flight([(0.0, 1.0), (1.0, 2.0)], 0.0, 2.0)
    assert got.maximum == 1 and got.mean == pytest.approx(1.0)


def test_pooled_figures_add_the_seconds_of_every_point():
    # one point 3 s at 1 and 1 s at 3, another 4 s at 2: 3 s at 1, 4 s at 2, 1 s at 3 over 8 s,
    # a mean of (3 + 8 + 3) / 8; half (4 s) is reached at 2 (3 + 4), 90 % (7.2 s) at 3
    a = in_flight([(0.0, 4.0), (3.0, 4.0), (3.0, 4.0)], 0.0, 4.0)
    b = in_flight([(0.0, 4.0), (0.0, 4.0)], 0.0, 4.0)
    both = pooled([a, None, b])
    assert both is not None and both.seconds == pytest.approx((0.0, 3.0, 4.0, 1.0))
    assert both.mean == pytest.approx((3 + 8 + 3) / 8)
    assert (both.p50, both.p90, both.maximum) == (2, 3, 3)
    assert pooled([None]) is None


def test_a_rate_point_offers_exactly_its_rate_over_its_span():
    offsets = arrival_offsets_s(50, 4.0, Arrivals("poisson"), seed=1)
    assert len(offsets) == 50 and offsets == sorted(offsets)
    assert 0 < offsets[0] and offsets[-1] < 50 / 4.0  # 50 requests inside 12.5 s
    assert arrival_offsets_s(50, 4.0, Arrivals("poisson"), seed=1) == offsets  # seeded
    assert arrival_offsets_s(50, 4.0, Arrivals("poisson"), seed=2) != offsets


def _gaps(arrivals: Arrivals) -> list[float]:
    offsets = arrival_offsets_s(40_000, 10.0, arrivals, seed=7)
    return [b - a for a, b in zip(offsets, offsets[1:])]


def test_poisson_gaps_are_exponential():
    gaps = _gaps(Arrivals("poisson"))
    mean = statistics.fmean(gaps)
    assert mean == pytest.approx(0.1, rel=0.01)  # 1 / rate
    # an exponential's standard deviation is its mean, and e^-1 of its gaps exceed the mean
    assert statistics.pstdev(gaps) / mean == pytest.approx(1.0, rel=0.03)
    assert sum(g > mean for g in gaps) / len(gaps) == pytest.approx(math.exp(-1), abs=0.01)


def test_bursty_gaps_have_the_coefficient_of_variation_asked_for():
    # gamma gaps of shape 1 / CV²: standard deviation CV × mean, same mean
    for cv in (2.0, 3.0):
        gaps = _gaps(parse_arrivals(f"bursty:{cv:g}"))
        assert statistics.fmean(gaps) == pytest.approx(0.1, rel=0.02)
        assert statistics.pstdev(gaps) / statistics.fmean(gaps) == pytest.approx(cv, rel=0.05)


@pytest.mark.parametrize(
    "text", ["uniform", "bursty:0.5", "bursty:x", "bursty:nan", "poisson:2", "bursty:11"]
)
def test_a_bad_arrival_process_is_one_line_with_the_fix(text):
    with pytest.raises(SpectopError) as err:
        parse_arrivals(text)
    assert "--arrivals" in err.value.what and "--arrivals poisson" in err.value.fix


def test_arrival_names():
    assert parse_arrivals("bursty") == Arrivals("bursty", 2.0)
    assert parse_arrivals("Poisson").spec == "poisson"
    assert parse_arrivals("bursty:3").spec == "bursty:3"


@pytest.mark.parametrize("text", ["a", "", "0", "-1", "inf", "1,nan"])
def test_a_bad_rate_is_one_line_with_the_fix(text):
    with pytest.raises(SpectopError) as err:
        parse_rates(text)
    assert "--rate" in err.value.what and err.value.fix.startswith("e.g. --rate")


def test_rates_come_after_the_batches_in_each_pass_the_second_pass_reversed():
    plan = SweepPlan(batches=(1,), rates=(4.0, 0.5), passes=2)
    labels = [k.label for k in plan.schedule()]
    assert labels == [
        "B=1 plain before (pass 1)",
        "B=1 draft (pass 1)",
        "B=1 plain after (pass 1)",
        "rate 0.5/s plain before (pass 1)",
        "rate 0.5/s draft (pass 1)",
        "rate 0.5/s plain after (pass 1)",
        "rate 4/s plain before (pass 1)",
        "rate 4/s draft (pass 1)",
        "rate 4/s plain after (pass 1)",
        "B=1 plain before (pass 2)",
        "B=1 draft (pass 2)",
        "B=1 plain after (pass 2)",
        "rate 4/s plain before (pass 2)",
        "rate 4/s draft (pass 2)",
        "rate 4/s plain after (pass 2)",
        "rate 0.5/s plain before (pass 2)",
        "rate 0.5/s draft (pass 2)",
        "rate 0.5/s plain after (pass 2)",
    ]
    assert SweepPlan(batches=(), rates=(1.0,)).schedule()[0].batch == 0


def test_a_plan_with_neither_batches_nor_rates_is_refused():
    with pytest.raises(SpectopError):
        SweepPlan(batches=())
    with pytest.raises(SpectopError):
        SweepPlan(rates=(1.0,), arrivals="steady")
    with pytest.raises(SpectopError):
        SweepPlan(rates=(1.0,), rate_requests=0)


def test_an_open_loop_row_s_load_and_in_flight_are_checked_when_a_run_is_read():
    good = {
        **note25_rows()[0],
        "batch": 0,
        "load": {"rate_rps": 2.0, "arrivals": "poisson", "seed": 0, "requests": 64},
        "in_flight": {"mean": 1.5, "p50": 1, "p90": 3, "max": 4, "seconds": [1.0, 2.0, 0.0, 0.5, 0.5]},
    }
    assert point_problem(good) is None
    # batch 0 is an open-loop point's alone
    no_load = {k: v for k, v in good.items() if k != "load"}
    assert point_problem(no_load) == "no batch (a whole number from 1)"
    assert point_problem({**good, "load": None}) == "no batch (a whole number from 1)"
    assert point_problem({**good, "load": {**good["load"], "rate_rps": "fast"}}) == (
        "load is not {rate_rps, arrivals, seed, requests}"
    )
    assert point_problem({**good, "load": {**good["load"], "rate_rps": 0}}) == (
        "load is not {rate_rps, arrivals, seed, requests}"
    )
    assert point_problem({**good, "in_flight": {**good["in_flight"], "seconds": [1.0, "x"]}}) == (
        "in_flight is not {mean, p50, p90, max, seconds}"
    )
    assert point_problem({**good, "in_flight": {**good["in_flight"], "max": 1.5}}) == (
        "in_flight is not {mean, p50, p90, max, seconds}"
    )


@pytest.mark.parametrize(
    ("rate_rps", "late_ms", "flagged"),
    # the limit is half a mean gap, at least 20 ms: at 32/s (31 ms gaps) 20 ms, at 2/s 250 ms
    [(32.0, 15.0, False), (32.0, 25.0, True), (2.0, 100.0, False), (2.0, 300.0, True), (2.0, None, False)],
)
def test_a_client_that_sent_late_is_flagged(rate_rps, late_ms, flagged):
    load = {
        "rate_rps": rate_rps,
        "arrivals": "poisson",
        "seed": 0,
        "requests": 64,
        "send_late_ms_p90": late_ms,
    }
    row = as_point({**note25_rows()[0], "batch": 0, "load": load})
    codes = [f.code for f in point_flags(row, 256, "counter")]
    assert ("late-sends" in codes) == flagged
    assert "late-sends" not in checks.EXCLUDING  # a warning: the point counts
