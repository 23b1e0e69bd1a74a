"""The predicted saving and its uncertainty from the sweep's repeats, worked by hand."""

from __future__ import annotations

import pytest

from collectors.tune.derive import derive_schedule
from collectors.tune.predict import cell_spreads, predict
from collectors.tune.profile import even, load_profile
from tests.support.sweep_rows import row
from tests.support.tune_runs import note25_run, save_run


def two_pass_run(folder):
    # mJ/token = 10 × W at 100 tok/s; two passes of 1000 tokens each. At 1: plain 400, draft 300 in
    # both; at 4: plain 200 in both, draft 220 then 240
    cells = {(1, "plain"): (40, 40), (1, "draft"): (30, 30), (4, "plain"): (20, 20), (4, "draft"): (22, 24)}
    rows = [
        row(b, arm, 100.0, watts[p], phase="before" if arm == "plain" else "", pass_=p)
        for (b, arm), watts in cells.items()
        for p in (0, 1)
    ]
    return save_run(folder, rows)


def test_the_spread_of_repeats_sets_the_uncertainty(tmp_path):
    run = two_pass_run(tmp_path / "run")
    schedule = derive_schedule(run, draft_tokens=3)
    assert [(lv.batch, lv.k) for lv in schedule.levels] == [(1, 3), (4, 0)]  # ratios 0.75, 1.15
    cells = cell_spreads(run, None, schedule.even_band)
    # draft at 4: 220 and 240, mean 230, sample stdev 14.14, standard error 14.14 / sqrt 2 = 10
    assert cells["draft"][4].mj_per_token == pytest.approx(230)
    assert cells["draft"][4].standard_error == pytest.approx(10)
    assert cells["plain"][4].standard_error == 0  # 200 twice
    prediction = predict(schedule, even(schedule.batches), cells)
    always, plain = prediction.savings
    # half the tokens at each: always-draft 0.5·300 + 0.5·230 = 265, the schedule 0.5·300 + 0.5·200
    # = 250: 15/265 = 5.66 % saved; only batch 4 differs: 2·sqrt(0.25·(10² + 0²))/265 = 3.77 %
    assert (always.against, always.compared_mj_per_token, always.scheduled_mj_per_token) == (
        "always-draft",
        265,
        250,
    )
    assert always.fraction == pytest.approx(15 / 265)
    assert always.error == pytest.approx(2 * 5 / 265)
    # against plain 0.5·400 + 0.5·200 = 300: 50/300 saved; only batch 1 differs, both 0 spread
    assert plain.fraction == pytest.approx(50 / 300) and plain.error == 0
    assert prediction.single_repeat_cells == 0


def test_a_profile_batch_between_levels_reads_the_curves_in_log_batch(tmp_path):
    run = note25_run(tmp_path / "run")
    schedule = derive_schedule(run, draft_tokens=4)
    cells = cell_spreads(run, None, schedule.even_band)
    prediction = predict(schedule, load_profile("3:1"), cells)
    always = prediction.savings[0]
    # batch 3 lies log(3/2)/log 2 = 0.585 of the way from 2 to 4; it runs the level at 2 (draft), so
    # the schedule is always-draft there: draft 278.9 + 0.585·(227.1 - 278.9) = 248.6, saving 0 ± 0
    assert always.scheduled_mj_per_token == pytest.approx(248.6, abs=0.1)
    assert always.fraction == 0 and always.error == 0
