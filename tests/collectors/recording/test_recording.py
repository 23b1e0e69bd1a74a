"""A recording reads back as what was recorded, holds no secret, stays bounded, and a bad file
stops with one line; the report's figures over a recording are the dashboard's definitions."""

from __future__ import annotations

import dataclasses

import pytest

from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.meters import MeterReading
from collectors.recording.reader import MeterEntry, RequestsEntry, is_recording, read_recording
from collectors.recording.report import summarize_recording
from collectors.recording.writer import Recorder, rotated_path
from collectors.sweep.arms import ArmSpec
from collectors.sweep.events import SweepStarted
from collectors.sweep.plan import SweepPlan
from tests.support import synthetic
from tests.support.manual_clock import ManualClock

KEY = "sk-recording-secret-7731"


def recorder(path, **kw) -> Recorder:
    return Recorder(path, server_url=synthetic.URL, meter=synthetic.METER, **kw)


def test_a_recording_reads_back_as_what_was_recorded(tmp_path):
    path = tmp_path / "session.jsonl"
    clock = ManualClock(500.0)
    rec = recorder(path, clock=clock)
    snaps = synthetic.snapshots()
    readings = synthetic.readings()
    records = [
        synthetic.record("draft-simple", "r1", 100.2),
        synthetic.record("plain", "r2", 100.5, "sweep:x"),
    ]
    events = synthetic.sweep_events()
    for snap in snaps:
        clock.advance(1.0)
        rec.poll(snap)
    rec.meter(readings, "meter hiccup")
    rec.requests(records)
    for event in events:
        rec.sweep(event)
    rec.close()

    got = read_recording(path)
    assert got.meter == synthetic.METER and got.server_url == synthetic.URL and got.t0_s == 500.0
    assert not got.skipped
    payloads = [e.payload for e in got.entries]
    assert [e.t_s for e in got.entries[:3]] == [1.0, 2.0, 3.0]
    assert [json_forms.snapshot_dict(s) for s in payloads[:3]] == [json_forms.snapshot_dict(s) for s in snaps]
    assert [s.taken_at_s for s in payloads[:3]] == [s.taken_at_s for s in snaps]
    assert payloads[3] == MeterEntry(tuple(readings), "meter hiccup")
    assert payloads[4] == RequestsEntry(tuple(records))  # with events, latency: the detail view's data
    sweep = payloads[5:]
    assert [type(e) for e in sweep] == [type(e) for e in events]
    assert sweep[0].schedule == events[0].schedule
    done = [e for e in sweep if type(e).__name__ == "PointDone"]
    sent = [e for e in events if type(e).__name__ == "PointDone"]
    assert done and done[0].row == sent[0].row
    assert done[0].records == ()  # a point's records are recorded as requests by the app
    assert sweep[-1].summary.recommendation == events[-1].summary.recommendation
    assert is_recording(path)


def test_a_recording_holds_no_api_key(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = recorder(path, secrets=[KEY, None])
    snap = dataclasses.replace(synthetic.snapshots()[0], error=f"401 for Bearer {KEY}")
    rec.poll(snap)
    arm = ArmSpec("draft", "http://127.0.0.1:8081", ("llama-server", "--api-key", KEY, "-m", "t.gguf"))
    rec.sweep(SweepStarted(tmp_path, SweepPlan(), (), (arm,)))
    rec.requests([dataclasses.replace(synthetic.record(), error=f"rejected key {KEY}")])
    rec.close()
    text = path.read_text()
    assert KEY not in text
    assert "401 for Bearer" in text and "rejected key" in text  # the lines are there, the key is not


def test_a_recording_rotates_past_its_cap_and_each_part_replays(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = recorder(path, max_bytes=20_000)
    for i in range(40):
        rec.requests([synthetic.record("draft-simple", f"r{i}", 100.0 + i)])
    rec.close()
    old = rotated_path(path)
    assert old.exists()
    assert path.stat().st_size <= 20_000 and old.stat().st_size <= 20_000
    new_part, old_part = read_recording(path), read_recording(old)
    ids = [r.request_id for e in old_part.entries + new_part.entries for r in e.payload.records]
    assert ids == [f"r{i}" for i in range(40 - len(ids), 40)]  # the newest kept, in order
    assert not rotated_path(old).exists()  # one older part only: at most twice the cap on disk


def test_a_torn_line_is_skipped_and_a_foreign_file_is_refused(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = recorder(path)
    for snap in synthetic.snapshots():
        rec.poll(snap)
    rec.close()
    with path.open("a") as f:
        f.write('{"t": 9.0, "kind": "poll", "url": ')
    got = read_recording(path)
    assert len(got.entries) == 3 and got.skipped == ("line 5: JSONDecodeError",)

    other = tmp_path / "points.jsonl"
    other.write_text('{"batch": 1}\n')
    assert not is_recording(other)
    with pytest.raises(SpectopError, match="not a spectop recording"):
        read_recording(other)


def test_energy_by_batch_level_is_window_joules_over_window_tokens(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = recorder(path)
    # a server that gives neither requests per decode step nor records: the busy slots at the poll
    base = dataclasses.replace(synthetic.snapshots()[1], busy_slots_per_decode=None)
    # 100 W throughout; two seconds at 1 busy slot (10 + 30 tokens), one at 4 (200 tokens)
    rec.meter([MeterReading(float(t), 100.0 * t, 100.0) for t in range(0, 6)])
    for t_s, busy, tokens in ((1.0, 1, 10), (2.0, 1, 30), (3.0, 4, 200), (9.0, 2, 50)):
        rec.poll(
            dataclasses.replace(base, taken_at_s=t_s, window_s=1.0, slots_busy=busy, window_tokens=tokens)
        )
    rec.close()
    levels = {row["busy_slots"]: row for row in summarize_recording(read_recording(path))["batch_levels"]}
    assert levels[1]["time_s"] == 2.0 and levels[1]["tokens"] == 40
    assert levels[1]["energy_j"] == pytest.approx(200.0) and levels[1]["mj_per_token"] == pytest.approx(
        5000.0
    )
    assert levels[4]["mj_per_token"] == pytest.approx(500.0)
    # past the meter's last reading: left out, and its level has no figure
    assert (
        not levels[2]["covered"] and levels[2]["mj_per_token"] is None and levels[2]["windows_left_out"] == 1
    )


def test_the_request_rows_carry_the_records_own_figures(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = recorder(path)
    record = synthetic.record("draft-simple", "r1", 100.2)
    rec.meter(synthetic.readings(99.0, 20.0))
    rec.requests([record])
    rec.close()
    (row,) = summarize_recording(read_recording(path))["requests"]
    assert row["source"] == "probe" and row["tokens"] == record.committed_tokens
    assert row["drafted"] == record.draft_n and row["accepted"] == record.draft_n_accepted
    assert (
        row["mean_advance"] == record.mean_advance and row["gap_p99_ms"] == record.latency.chunk_gaps.p99_ms
    )
    assert row["mj_per_token"] is not None and row["mj_per_token"] > 0


def test_a_later_part_replays_from_its_first_line(tmp_path):
    # a request every 10 s from t = 1000: the second part begins hours of recording in, and must
    # start at its first line (not make a replay wait through the time the first part holds)
    path = tmp_path / "session.jsonl"
    clock = ManualClock(1000.0)
    rec = recorder(path, max_bytes=20_000, clock=clock)
    for i in range(40):
        clock.advance(10.0)
        rec.requests([synthetic.record("draft-simple", f"r{i}", 100.0 + i)])
    rec.close()
    new_part = read_recording(path)
    first_t = new_part.t0_s + new_part.entries[0].t_s
    assert new_part.entries[0].t_s == 0.0 and new_part.duration_s == pytest.approx(
        10.0 * (len(new_part.entries) - 1)
    )
    # the monotonic times are kept: the last request went in at 1000 + 40 x 10
    assert new_part.t0_s + new_part.entries[-1].t_s == pytest.approx(1400.0)
    assert first_t == pytest.approx(1400.0 - new_part.duration_s)
    older = read_recording(rotated_path(path))  # the part before it ends before it starts
    assert older.t0_s + older.entries[-1].t_s < first_t
