"""What the sweep tells a user when its figures cannot carry the usual verdict: a concurrency whose
figures contradict each other, a sweep without a meter (a speed-only verdict, plain's drift on
speed), the CPU-load estimate (said with what to use instead). Truths are worked by hand below."""

from __future__ import annotations

import pytest

from collectors.sweep import checks, sentences, tables
from collectors.sweep.checks import drift_flag, point_flags
from collectors.sweep.codec import to_json
from collectors.sweep.records import summary_from_json
from collectors.sweep.summary import summarize
from tests.support.sweep_rows import fine_point as point
from tests.support.sweep_rows import note25_rows, points


def flags_of(row, method="counter"):
    return point_flags(row, 64, method)


def test_a_peak_below_its_mean_is_unknown_concurrency_and_gives_no_slot_advice():
    # the row: 2.4 requests per decode on average, yet at most 0 busy when polled, on a
    # server started with -np 8. A peak is never below its mean: how many ran is unknown
    found = flags_of(point(batch=4, server_busy_per_decode=2.4, concurrency_max=0, server={"slots_total": 8}))
    assert [f.code for f in found] == ["concurrency-unknown"]
    assert "-np" not in found[0].message and "2.4" in found[0].message
    assert "concurrency-unknown" not in checks.EXCLUDING  # a warning: the point still counts


def test_the_slot_advice_is_given_only_when_the_slots_do_not_cover_the_batch():
    # 2.4 < 0.75 * 4 = 3 requests per decode, with a consistent peak of 3: too few ran at once
    short = {"batch": 4, "server_busy_per_decode": 2.4, "concurrency_max": 3}
    (eight,) = flags_of(point(**short, server={"slots_total": 8}))
    assert eight.code == "concurrency" and "-np" not in eight.message
    assert "it has 8 slots" in eight.message
    (two,) = flags_of(point(**short, server={"slots_total": 2}))
    assert "start it with -np >= the batch" in two.message
    (unknown,) = flags_of(point(**short))
    assert "start it with -np >= the batch" in unknown.message


def test_the_estimate_flag_says_what_to_measure_with_instead():
    (found,) = flags_of(point(), method="estimate")
    assert found.message.startswith("energy is a CPU-load estimate, not a measurement: ")
    assert "--meter rapl" in found.message and "--meter dcgm=URL" in found.message
    assert {"estimate", "no-meter"} <= checks.RUN_WIDE


def test_without_energy_plain_drift_is_checked_on_speed():
    # the plain arm: 920 tok/s before draft, 1294 after: 1294 / 920 - 1 = +40.7 %
    found = drift_flag(point(tok_s=1294.0, mj_per_token=None), point(tok_s=920.0, mj_per_token=None), 0.05)
    assert found is not None and found.code == "plain-drift"
    assert "+40.7 % tok/s against plain before (limit 5 %)" in found.message
    # 1000 / 960 - 1 = +4.2 %: within 5 %
    assert drift_flag(point(tok_s=1000.0), point(tok_s=960.0), 0.05) is None


def no_meter(rows):
    """Note 25's points as a sweep without a meter records them: no energy, flagged no-meter."""
    for r in rows:
        r.update(energy_j=None, energy_covered=False, net_energy_j=None)
        r["flags"] = r["flags"] + [{"code": "no-meter", "message": "no power meter: energy not measured"}]
    return rows


def test_without_a_meter_the_verdict_is_read_from_speed_and_says_energy_was_not_measured():
    result = summarize(points(no_meter(note25_rows())))
    # note 25's speed-ups, draft over plain tok/s: 78.3 / 61.9 = 1.26, 125.5 / 100.2 = 1.25 (faster,
    # above 1.05); 163.4 / 192.3 = 0.85, 229.8 / 339.2 = 0.68, 329.1 / 377.0 = 0.87 (slower, below 0.95)
    assert result["recommendation"] == (
        "energy not measured (no meter); by speed alone, drafting is faster at 1, 2 and slower at "
        "4, 8, 16 concurrent requests: measure energy with a meter to judge it"
    )
    assert result["crossover"] is None
    md = sentences.to_markdown(summary_from_json(result))
    assert "no valid paired points" not in md
    assert "Energy not measured at B=1, 2, 4, 8, 16 (no meter)" in md and "No trustworthy pair" not in md
    # the speed-ups are used, so not in parentheses; the energy column is empty
    header, cells = tables.table_cells(summary_from_json(result))
    one = dict(zip(header, cells[0]))
    assert one["speed"] == "1.26x" and one["energy"] == "—"


def test_without_a_meter_a_drifting_plain_arm_keeps_its_batch_out_of_the_speed_verdict():
    rows = no_meter(note25_rows())
    for r in rows:  # plain after draft at B=4 ran 40.7 % faster than before it
        if r["batch"] == 4 and r["arm"] == "plain" and r["phase"] == "after":
            r["flags"].append(to_json(drift_flag(point(tok_s=1294.0), point(tok_s=920.0), 0.05)))
    result = summarize(points(rows))
    assert result["recommendation"] == (
        "energy not measured (no meter); by speed alone, drafting is faster at 1, 2 and slower at "
        "8, 16 concurrent requests: measure energy with a meter to judge it"
    )
    assert {"batch": 4, "because": ["no-meter", "plain-drift"]} in result["untrusted"]
    md = sentences.to_markdown(summary_from_json(result))
    assert "No trustworthy pair at B=4: no-meter, plain-drift" in md
    header, cells = tables.table_cells(summary_from_json(result))
    assert dict(zip(header, cells[2]))["speed"] == "(0.85x)"


@pytest.mark.parametrize("speeds", [[(1, 1.02), (2, 1.04)], [(4, 0.9)]])
def test_speed_alone_at_every_batch(speeds):
    from collectors.sweep.rule import judge_speed

    said = judge_speed(speeds)
    word = "as fast (within 5 %)" if speeds[0][1] > 1 else "slower"
    assert f"drafting is {word} at every measured batch" in said


def test_a_mean_at_its_peak_is_no_contradiction():
    # 4.02 requests per decode beside a polled peak of 4 (the counter's rounding): not unknown, and
    # 4.02 >= 0.75 * 4 is enough
    assert flags_of(point(batch=4, server_busy_per_decode=4.02, concurrency_max=4)) == []
