"""The sweep's cross-checks at their edges: the drift flag's code (what `EXCLUDING` matches), its
limit taken inclusively, and a pair without both mJ/token figures left unchecked."""

from __future__ import annotations

from collectors.sweep import summary
from collectors.sweep.checks import EXCLUDING, drift_flag
from tests.support.sweep_rows import note25_rows


def plain(mj_per_token):
    return {"arm": "plain", "mj_per_token": mj_per_token}


def test_drift_beyond_the_limit_is_flagged_plain_drift_and_excludes_its_pass():
    # 80 / 64 - 1 = +25 % exactly (binary fractions), against a 20 % limit
    found = drift_flag(plain(80.0), plain(64.0), 0.20)
    assert found is not None and found["code"] == "plain-drift" and found["code"] in EXCLUDING
    assert "+25.0 % mJ/token against plain before (limit 20 %)" in found["message"]
    # the summary matches the flag by its code: the flagged pass at B=1 leaves the batch untrusted
    rows = note25_rows()
    rows[2]["flags"] = [found]
    assert summary.summarize(rows)["rows"][0]["excluded"] == ["plain-drift"]


def test_a_drift_of_exactly_the_limit_is_within_it():
    # 80 / 64 - 1 = 0.25 exactly: at the limit, not beyond it
    assert drift_flag(plain(80.0), plain(64.0), 0.25) is None
    assert drift_flag(plain(48.0), plain(64.0), 0.25) is None  # -25 %, the other side


def test_no_drift_check_without_both_figures():
    # no plain point before (the first pass), or one side without mJ/token (no energy measured)
    assert drift_flag(plain(80.0), None, 0.01) is None
    assert drift_flag({"arm": "plain", "mj_per_token": None}, plain(64.0), 0.01) is None
    assert drift_flag({"arm": "plain"}, plain(64.0), 0.01) is None
    assert drift_flag(plain(80.0), {"arm": "plain", "mj_per_token": None}, 0.01) is None
