"""`spectop replay FILE --ledger PATH`: a recording's windows into the energy ledger, at the hours they
were recorded, each once however often the file is replayed or the replay seeked back.

Done-when of issue 27 item 2, as a user does it: two days recorded by `--record` (spectop restarted
in the middle: a restart is a new process, so a second recording file), replayed with `--ledger`,
give the meter counter's kWh in `spectop report --since` within 0.5 %.

Truth by hand (tests/support/ledger_stream.py): mean power over a day is 330 W, so two days are
330 × 172,800 = 57,024,000 J = 15.840 kWh on the counter. spectop is down for 60 s at the 25th
hour, and the second process's first poll has no window, so the ledger misses at most
70 s × 470 W = 32.9 kJ = 0.06 % of the counter.
"""

from __future__ import annotations

import json
import time

import pytest

from collectors.ledgerdb.background import BackgroundStore
from collectors.ledgerdb.store import EnergyStore
from collectors.meters import MeterReading
from collectors.recording.reader import read_recording
from collectors.recording.writer import Recorder
from collectors.sweep import summary
from collectors.sweep.events import SweepEnded
from tests.support.cli_runs import spectop
from tests.support.ledger_stream import Meter, record_spectop
from tests.support.manual_clock import ManualClock
from tests.support.snapshots import window_snapshot
from tests.support.sweep_rows import note25_rows, points
from tui.cli import main
from tui.replay import ReplayApp
from tui.state import LiveState

DAY_S = 86_400
NOTE25 = summary.summary_of(points(note25_rows()))  # a paired sweep's curves


def report(path, since: str = "3d") -> dict:
    done = spectop("report", "--since", since, "--ledger", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow  # two 11 MB recordings, 17,280 polls: about 11 s (replayed twice: the next tests)
def test_two_recorded_days_replayed_into_the_ledger_give_the_counters_kwh(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    # on an hour, so the hours the windows land in are known: the recording ended 1–2 h ago
    wall0_s = time.time() // 3600 * 3600 - 2 * DAY_S - 3600
    meter = Meter()
    first = record_spectop(tmp_path / "first.jsonl", meter, 0, 25 * 3600, wall0_s)
    second = record_spectop(tmp_path / "second.jsonl", meter, 25 * 3600 + 60, 2 * DAY_S, wall0_s)
    assert meter.energy_j == 57_024_000  # the hand figure above: the counter's difference

    # given newest first: imported oldest first, or the ledger would refuse the older day
    done = spectop("replay", str(second), str(first), "--ledger", str(ledger), "--no-ui")
    assert done.returncode == 0, done.stderr
    # windows: 90,000 s / 10 s = 9,000 in the first; (172,800 − 90,060) / 10 = 8,274 in the second
    assert "first.jsonl: 9,000 windows" in done.stdout and "9,000 added" in done.stdout
    assert "second.jsonl: 8,274 windows" in done.stdout and "8,274 added" in done.stdout
    assert "spectop report --since 3d" in done.stdout  # the recording began 2 d 1–2 h ago

    summary = report(ledger)
    assert abs(summary["kwh"] - 15.840) / 15.840 < 0.005, summary["kwh"]
    assert summary["kwh"] < 15.840  # the missed minute is missing, not made up
    # the recording's hours, not the replay's: the first window ends 10 s after the recording began,
    # the last on the hour 48 h later, whose row is that hour's
    assert summary["first_unix_s"] == wall0_s
    assert summary["last_unix_s"] == wall0_s + 49 * 3600


def one_hour(tmp_path):
    """An hour at batch 1, 190 W, recorded two hours ago. Truth: polls at 0, 10, …, 3,600 s; the
    first has no window, the 360 others hold 10 s each: 3,600 s × 190 W = 684,000 J = 0.190 kWh."""
    wall0_s = time.time() - 2 * 3600
    return record_spectop(tmp_path / "hour.jsonl", Meter(), 0, 3600, wall0_s)


def test_replaying_a_recording_twice_does_not_double_its_kwh(tmp_path):
    recording, ledger = one_hour(tmp_path), tmp_path / "ledger.sqlite"
    for _ in range(2):
        done = spectop("replay", str(recording), "--ledger", str(ledger), "--no-ui")
        assert done.returncode == 0, done.stderr
    assert "0 added to the energy ledger" in done.stdout and "(360 there already)" in done.stdout
    assert report(ledger, "1d")["kwh"] == pytest.approx(0.190)


async def test_the_dashboards_replay_keeps_the_ledger_once_across_a_seek_back(tmp_path):
    recording = read_recording(one_hour(tmp_path))
    ledger = tmp_path / "ledger.sqlite"
    sink = BackgroundStore(EnergyStore(ledger))  # as `spectop replay FILE --ledger PATH` keeps it
    app = ReplayApp(recording, clock=ManualClock(), ledger=sink)
    async with app.run_test(size=(140, 42)) as pilot:
        app.play_to(1800)
        await pilot.press("left", "left")  # back 10 s: the state is rebuilt from the start
        assert app.position_s == 1790
        app.play_to(900)
        app.play_to(recording.duration_s)
        await pilot.pause()
    sink.close()
    # the hour, once: 3,600 s × 190 W (see one_hour)
    assert report(ledger, "1d")["kwh"] == pytest.approx(0.190)


def test_an_import_stopped_by_ctrl_c_keeps_what_it_read_and_a_second_adds_the_rest(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C as the poll at 1,800 s is read: the windows of the polls at 10 … 1,790 s are kept
    (179 × 10 s × 190 W = 340,100 J); imported again, the other 181 (1,800 … 3,600 s) are added."""
    recording, ledger = one_hour(tmp_path), tmp_path / "ledger.sqlite"
    add_snapshot = LiveState.add_snapshot

    def interrupted(state, snap):
        if snap.taken_at_s == 1800:
            raise KeyboardInterrupt
        add_snapshot(state, snap)

    monkeypatch.setattr(LiveState, "add_snapshot", interrupted)
    assert main(["replay", str(recording), "--ledger", str(ledger), "--no-ui"]) == 130
    assert "interrupted" in capsys.readouterr().err
    with EnergyStore(ledger) as store:
        assert sum(row.energy_j for row in store.hours(0)) == pytest.approx(340_100)
    monkeypatch.setattr(LiveState, "add_snapshot", add_snapshot)
    assert main(["replay", str(recording), "--ledger", str(ledger), "--no-ui"]) == 0
    assert "360 windows" in capsys.readouterr().out
    assert report(ledger, "1d")["kwh"] == pytest.approx(0.190)


def test_a_recorded_sweep_judges_the_imported_windows_as_it_did_live(tmp_path, capsys):
    """A sweep that ended before the polls (note 25's curves) judges them as in the live ledger's
    test (tests/collectors/ledgerdb/test_drafting_verdicts.py, server B): drafting at 8 requests,
    40 W and 250 tokens a second is 160 mJ/token, 1.471 of plain's 108.79: it costs, so the 100
    judged seconds are not paid, and off its 4,000 J would have been 2,719.6 J: 1,280.4 J saved."""
    path, ledger = tmp_path / "sweep.jsonl", tmp_path / "ledger.sqlite"
    clock = ManualClock(0.0)
    recorder = Recorder(
        path, server_url="http://b:8080", meter=None, clock=clock, wall_clock=lambda: time.time() - 600
    )
    recorder.sweep(SweepEnded(tmp_path, NOTE25, cancelled=False))
    for i in range(201):  # 100 one-second polls after a first one, a meter read every 0.5 s
        clock.t_s = 10 + i / 2
        recorder.meter([MeterReading(clock.t_s, 40.0 * i / 2, 40.0)])
        if i % 2 == 0:
            window_s = 1.0 if i else None
            recorder.poll(
                window_snapshot(
                    clock.t_s,
                    url="http://b:8080",
                    window_s=window_s,
                    window_tokens=250,
                    drafting=True,
                    busy_slots_per_decode=8.0,
                )
            )
    recorder.close()
    assert main(["replay", str(path), "--ledger", str(ledger), "--no-ui"]) == 0
    assert "100 added" in capsys.readouterr().out
    body = report(ledger, "1d")
    assert body["judged_s"] == 100 and body["drafting_paid_share"] == 0
    assert abs(body["schedule_saving_kwh"] * 3.6e6 - 1280.4) < 0.5


def test_no_ui_without_a_ledger_says_what_to_add(tmp_path):
    recording = one_hour(tmp_path)
    done = spectop("replay", str(recording), "--no-ui")
    assert done.returncode != 0
    assert "--no-ui only puts a recording into the energy ledger" in done.stderr
    assert "add --ledger" in done.stderr and "Traceback" not in done.stderr
    two = spectop("replay", str(recording), str(recording))
    assert "one recording at a time" in two.stderr and "Traceback" not in two.stderr
    swapped = spectop("replay", "--ledger", str(recording), str(tmp_path / "ledger.sqlite"))
    assert swapped.returncode == 2
    assert f"--ledger {recording} is a recording, not a ledger" in swapped.stderr
    assert not (tmp_path / "ledger.sqlite").exists() and "Traceback" not in swapped.stderr


def test_an_older_recording_is_timed_by_its_started_field(tmp_path):
    """A header written before `wall0_unix_s` existed: `started` (to the second) gives the wall clock."""
    path = tmp_path / "old.jsonl"
    lines = one_hour(tmp_path).read_text().splitlines()
    head = json.loads(lines[0])
    del head["wall0_unix_s"]
    head["started"] = "2026-11-30T04:00:00+00:00"
    path.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    # 2026-01-01 is 56 × 365 + 14 leap days = 20,454 days after 1970; Nov 30 is 304 + 29 days
    # later: 20,787 days × 86,400 s + 4 h = 1,796,011,200
    assert read_recording(path).wall0_unix_s == 1_796_011_200
