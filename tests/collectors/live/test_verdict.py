"""The live verdicts without a UI: the sweep curves between batches, the energy verdict, the void draft."""

from __future__ import annotations

import math

import pytest

from collectors.live.accounting import LiveLedger
from collectors.live.verdict import (
    VOID_LOADED,
    LiveEnergy,
    change,
    curve_at,
    curve_ratio_at,
    live_energy,
    verdict,
    void_warning,
)
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep import summary
from collectors.sweep.codec import to_json
from collectors.sweep.records import summary_from_json
from tests.support.snapshots import window_snapshot
from tests.support.sweep_rows import flagged, note25_rows, points

NOTE25 = summary.summary_of(points(note25_rows()))
NOTE25_JSON = to_json(NOTE25)  # as summary.json holds it
URL = "http://127.0.0.1:8080"


def test_curves_are_read_linearly_in_log_batch_and_clamped_at_the_ends():
    plain = {t["batch"]: t["plain"]["mj_per_token"] for t in NOTE25_JSON["rows"]}
    assert curve_at(NOTE25, "plain", 2) == pytest.approx(plain[2])
    # 2.83 is halfway from 2 to 4 on a log axis: halfway between their figures
    assert curve_at(NOTE25, "plain", 2 * math.sqrt(2)) == pytest.approx((plain[2] + plain[4]) / 2)
    assert curve_at(NOTE25, "plain", 0.5) == pytest.approx(plain[1])
    assert curve_at(NOTE25, "plain", 64) == pytest.approx(plain[16])
    assert curve_ratio_at(NOTE25, 2) == pytest.approx(0.71, abs=0.01)
    assert curve_at(summary_from_json({"rows": []}), "plain", 2) is None


def test_crossover_lies_on_the_same_line_as_the_ratio_curve():
    cross = NOTE25_JSON["crossover"]
    assert cross["below"] == 2 and cross["above"] == 4
    # where the ratio rises through 1.0, and the band's edges around it
    assert curve_ratio_at(NOTE25, cross["batch_at_1"]) == pytest.approx(1.0, abs=0.005)
    assert curve_ratio_at(NOTE25, cross["band_low"]) == pytest.approx(0.95, abs=0.005)
    assert curve_ratio_at(NOTE25, cross["band_high"]) == pytest.approx(1.05, abs=0.005)


def test_curves_skip_the_points_the_sweep_does_not_trust():
    rows = flagged(note25_rows(), 4, "draft", "concurrency")
    rows = flagged(rows, 4, "plain", "other-traffic")  # figures kept in the table, not trusted
    untrusted_4 = summary.summary_of(points(rows))
    # B=4 is left out: at 4, halfway from 2 to 8 in log B, the curves read the mean of 2 and 8
    halfway_2_8 = 4
    ratio = {t["batch"]: t["energy_ratio"] for t in NOTE25_JSON["rows"]}
    assert curve_ratio_at(untrusted_4, halfway_2_8) == pytest.approx((ratio[2] + ratio[8]) / 2)
    plain = {t["batch"]: t["plain"]["mj_per_token"] for t in NOTE25_JSON["rows"]}
    assert curve_at(untrusted_4, "plain", halfway_2_8) == pytest.approx((plain[2] + plain[8]) / 2)


def test_verdict_against_the_plain_curve():
    plain_2 = curve_at(NOTE25, "plain", 2)
    assert verdict(0.79 * plain_2, 2.0, NOTE25, True) == (
        "drafting saves 21 % at 2.0 requests (vs the sweep's plain curve)"
    )
    assert verdict(1.12 * plain_2, 2.0, NOTE25, None).startswith("drafting costs 12 % more")
    assert verdict(300.0, 2.0, NOTE25, False) == "not drafting; at 2.0 requests drafting would save 29 %"
    # the sweep's one rule: within 5 % of the plain curve is break-even, not "saves 3 %"
    assert verdict(0.97 * plain_2, 2.0, NOTE25, True).startswith("drafting breaks even (-3 %, within 5 %)")
    assert verdict(1.04 * plain_2, 2.0, NOTE25, True).startswith("drafting breaks even (+4 %, within 5 %)")
    assert verdict(1.06 * plain_2, 2.0, NOTE25, True).startswith("drafting costs 6 % more")
    assert verdict(300.0, 2.0, None, True).startswith("no sweep yet")
    assert verdict(None, 2.0, NOTE25, True).startswith("idle")


def test_live_energy_gives_no_figure_while_a_sweep_runs():
    live = LiveLedger()
    for i in range(101):
        live.add_power(i / 10, 40.0, 4.0 * i)
    for t in range(1, 11):
        live.add_snapshot(
            window_snapshot(
                float(t), window_tokens=100, slots_busy=2, busy_slots_per_decode=2.0, drafting=True
            )
        )
    now = live_energy(live, NOTE25, sweep_running=False)
    assert now.mj_per_token == pytest.approx(400.0) and now.batch == 2.0
    assert now.verdict.startswith(
        "drafting breaks even (+3 %, within 5 %) at 2.0 requests"
    )  # plain at 2: 390 mJ
    during = live_energy(live, NOTE25, sweep_running=True)
    assert during.mj_per_token is None and "sweep running" in during.verdict


@pytest.mark.parametrize(
    ("draft_url", "draft_cmd", "drafting", "says"),
    [
        (None, "llama-server -m t.gguf -md d.gguf --port 8080", None, "--spec-type is missing"),
        (None, "llama-server -m t.gguf -md d.gguf --spec-type draft-simple", True, None),
        (URL + "/", None, False, "draft arm but drafts nothing"),
        (URL, None, True, None),
        ("http://127.0.0.1:9090", None, False, None),  # another server is the draft arm
    ],
)
def test_void_warning(draft_url, draft_cmd, drafting, says):
    snap = ServerSnapshot(url=URL, backend="llama.cpp", taken_at_s=1.0, status="ok", drafting=drafting)
    warning = void_warning(URL, draft_url, draft_cmd, snap)
    assert (warning is None) if says is None else (says in warning)


def busy_ledger(drafting: bool | None) -> LiveLedger:
    live = LiveLedger()
    for i in range(101):
        live.add_power(100.0 + i / 10, 40.0, 4.0 * i)
    for t in range(101, 111):
        live.add_snapshot(
            ServerSnapshot(
                url="u",
                backend="llama.cpp",
                taken_at_s=float(t),
                status="ok",
                window_s=1.0,
                window_tokens=100,
                slots_busy=2,
                busy_slots_per_decode=2.0,
                drafting=drafting,
            )
        )
    return live


def test_live_energy_carries_every_figure_of_the_window():
    live = busy_ledger(False)
    live.known_idle_w = 10.0
    now = live_energy(live, NOTE25, sweep_running=False)
    # 40 W and 100 tok/s over the polls at 101..110 s: 10 s, 1000 tokens, 400 mJ/token, (40 - 10) / 100 net
    assert (now.window_s, now.tokens) == (pytest.approx(10.0), 1000)
    assert (now.mj_per_token, now.net_mj_per_token) == (pytest.approx(400.0), pytest.approx(300.0))
    assert now.verdict.startswith("not drafting; at 2.0 requests drafting would save")
    during = live_energy(busy_ledger(True), NOTE25, sweep_running=True)
    assert during == LiveEnergy(None, None, None, 0, 2.0, "sweep running: live energy resumes after it")
    empty = live_energy(LiveLedger(), NOTE25, sweep_running=False)
    assert empty.verdict == "idle: the verdict needs traffic on the server"


def test_the_verdicts_words_and_rounding():
    assert change(0.4) == "saves 60 %" and change(1.6) == "costs 60 % more"
    assert change(1.0) == "breaks even (+0 %, within 5 %)"
    assert change(1.049) == "breaks even (+5 %, within 5 %)" and change(1.06) == "costs 6 % more"
    assert (
        verdict(300.0, 2.0, summary_from_json({"rows": []}), True)
        == "the last sweep has no plain curve to compare with"
    )
    plain_only = {
        "rows": [
            {
                "batch": 1,
                "plain": {"mj_per_token": 300.0, "trusted": True},
                "energy_ratio": None,
                "void": True,
            }
        ]
    }
    assert verdict(300.0, 2.0, summary_from_json(plain_only), False) == "this server does not draft"


def test_void_points_never_feed_the_ratio_curve():
    rows = [
        {"batch": 1, "energy_ratio": 0.8, "void": False, "trusted": True},
        {"batch": 2, "energy_ratio": 5.0, "void": True, "trusted": False},  # nothing was drafted at 2
        {"batch": 4, "energy_ratio": 1.2, "void": False, "trusted": True},
    ]
    # 2 is halfway from 1 to 4 on a log axis: halfway between 0.8 and 1.2
    assert curve_ratio_at(summary_from_json({"rows": rows}), 2) == pytest.approx(1.0)


def test_void_warning_words_and_urls():
    snap = ServerSnapshot(url=URL, backend="llama.cpp", taken_at_s=1.0, status="ok", drafting=False)
    assert void_warning(URL + "/", URL, None, snap) == (
        "VOID: this server is the draft arm but drafts nothing (llama-server needs "
        "--spec-type draft-simple as well as -md)"
    )
    assert void_warning(URL + "/", None, "llama-server -m t.gguf -md d.gguf --port 8080", None) == (
        "VOID: the draft model is loaded with -md but --spec-type is missing, so nothing is "
        "drafted (add --spec-type draft-simple)"
    )
    # a draft command for another port is not this server's
    assert (
        void_warning(URL, None, "llama-server -m t.gguf -md d.gguf --spec-type x --port 9090", snap) is None
    )


@pytest.mark.parametrize(
    ("launched", "void"),
    [
        (("llama-server", "-m", "t.gguf", "-md", "d.gguf"), True),  # -md alone: loaded, never used
        (("llama-server", "-m", "t.gguf", "-md", "d.gguf", "--spec-type", "draft-simple"), False),
        (("llama-server", "-m", "t.gguf"), False),
        ((), False),  # not started by spectop: the server's pages cannot tell
    ],
)
def test_void_warning_of_the_command_spectop_started(launched, void):
    # llama-server with -md and no --spec-type answers exactly like a plain one (drafting False),
    # so only the command it was started with tells them apart (tests/data/llama-server/README.md)
    snap = ServerSnapshot(url=URL, backend="llama.cpp", taken_at_s=1.0, status="ok", drafting=False)
    warning = void_warning(URL, None, None, snap, launched)
    assert warning == (VOID_LOADED if void else None)
