"""The sweep's checks at their edges: the drift and mismatch flags' codes (what `EXCLUDING` matches),
the drift limit taken inclusively, a pair without both mJ/token figures left unchecked, a row saved
without flags, and the idle baseline's own meter checks."""

from __future__ import annotations

from collectors.meters.base import MeterInfo
from collectors.meters.sampler import WindowEnergy
from collectors.sweep import summary
from collectors.sweep.checks import EXCLUDING, drift_flag, exclusions, idle_flag, mismatch_flag, point_flags
from collectors.sweep.codec import to_json
from tests.support.sweep_rows import as_point, note25_rows, points
from tests.support.sweep_rows import fine_point as point


def plain(mj_per_token):
    return as_point({"arm": "plain", "mj_per_token": mj_per_token})


def test_drift_beyond_the_limit_is_flagged_plain_drift_and_excludes_its_pass():
    # 80 / 64 - 1 = +25 % exactly (binary fractions), against a 20 % limit
    found = drift_flag(plain(80.0), plain(64.0), 0.20)
    assert found is not None and found.code == "plain-drift" and found.code in EXCLUDING
    assert "+25.0 % mJ/token against plain before (limit 20 %)" in found.message
    # the summary matches the flag by its code: the flagged pass at B=1 leaves the batch untrusted
    rows = note25_rows()
    rows[2]["flags"] = [to_json(found)]
    assert summary.summarize(points(rows))["rows"][0]["excluded"] == ["plain-drift"]


def test_a_drift_of_exactly_the_limit_is_within_it():
    # 80 / 64 - 1 = 0.25 exactly: at the limit, not beyond it
    assert drift_flag(plain(80.0), plain(64.0), 0.25) is None
    assert drift_flag(plain(48.0), plain(64.0), 0.25) is None  # -25 %, the other side


def test_no_drift_check_without_both_figures():
    # no plain point before (the first pass), or one side without mJ/token (no energy measured)
    assert drift_flag(plain(80.0), None, 0.01) is None
    assert drift_flag(as_point({"arm": "plain", "mj_per_token": None}), plain(64.0), 0.01) is None
    assert drift_flag(as_point({"arm": "plain"}), plain(64.0), 0.01) is None
    assert drift_flag(plain(80.0), as_point({"arm": "plain", "mj_per_token": None}), 0.01) is None


def test_differing_outputs_are_flagged_output_mismatch():
    reference = as_point({"requests": [{"text_sha256": "a"}] * 4})
    mine = as_point({"requests": [{"text_sha256": "a"}] * 3 + [{"text_sha256": "b"}]})
    found = mismatch_flag(mine, reference)
    assert found is not None and found.code == "output-mismatch" and found.code in EXCLUDING


def test_a_row_saved_without_flags_counts():
    assert exclusions(points([{"batch": 1, "pass": 0}, {"batch": 1, "pass": 0, "flags": []}])) == [(), ()]


def idle_window(**over) -> WindowEnergy:
    # 50 J over 2.5 s (20 W) on a 0.1 s counter, read by a meter that can draw far more than that
    info = MeterInfo("counting", ("gpu0",), "test", "counter", 0.1)
    fields = dict(
        energy_j=50.0,
        t0_s=100.0,
        t1_s=102.5,
        n_samples=25,
        covered=True,
        short_window=False,
        method="counter",
        update_period_s=0.1,
        unchanged_s=0.0,
        faults=(),
        info=info,
    )
    return WindowEnergy(**{**fields, **over})


def test_an_idle_meter_that_stands_still_is_a_baseline_but_one_that_ran_back_is_not():
    # idle, the counter may stand still for the whole window: the server ran no work to move it
    assert idle_flag(idle_window(unchanged_s=2.5)) is None
    ran_back = idle_flag(idle_window(faults=("reset",)))
    assert ran_back is not None and ran_back.code == "idle-meter-backwards"
    assert ran_back.message.startswith(
        "the meter's counter went backwards in the window (reset) (idle window): no idle baseline"
    )


def test_a_short_idle_window_names_its_own_length():
    found = idle_flag(idle_window(short_window=True))
    assert found is not None and found.code == "idle-short"
    assert found.message.startswith(
        "the 2.50 s idle window is shorter than 10 meter update periods (0.1 s each)"
    )


def codes(row, method="counter", energy=None):
    return [f.code for f in point_flags(row, 64, method, energy)]


def test_point_flag_codes_and_their_edges():
    assert codes(point()) == []
    # 3.0 requests per decode at B=4 is exactly 75 %: enough
    assert codes(point(server_busy_per_decode=3.0)) == []
    assert codes(point(server_busy_per_decode=2.9)) == ["concurrency"]
    assert codes(point(), method="none") == ["no-meter"]
    # a failed request is a request error, not also an early stop
    failed = [{"error": "HTTP 500", "committed_tokens": 0}] + [{"committed_tokens": 64}] * 3
    assert codes(point(requests=failed)) == ["request-errors"]
    assert codes(point(), method="estimate") == ["estimate"]
    # the server's counts are exact unless it says otherwise: one token more is other traffic
    assert codes(point(server_tokens=257)) == ["other-traffic"]
    assert codes(point(server_tokens=257, server_tokens_tolerance=1)) == []
    # a point whose stream said nothing of its steps is not "inferred" unless it says so
    assert codes(point(mean_advance=2.4)) == []
    assert codes(point(mean_advance=2.4, steps_exact=False)) == ["steps-inferred"]


def test_a_meter_problem_is_flagged_with_its_own_code_and_idle_work_is_not_stale():
    stuck = idle_window(energy_j=50.0, unchanged_s=2.5)  # stood still 2.5 s of a 2.5 s window
    assert codes(point(), energy=stuck) == ["meter-stale"]
    assert "meter-stale" in codes(
        point(committed_tokens=1, server_tokens=1), energy=stuck
    )  # one token is work
    # no tokens generated: a counter standing still is what an idle meter may do
    assert "meter-stale" not in codes(point(committed_tokens=0, server_tokens=0), energy=stuck)
