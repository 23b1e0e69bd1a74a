"""Recording from the dashboard and replaying it: the same panels, the replay keys, the request
detail view, and `spectop report` on a recording."""

from __future__ import annotations

import dataclasses

import pytest
from textual.widgets._toast import Toast

from collectors.recording.writer import Recorder
from collectors.recording.reader import read_recording
from tests.support import synthetic
from tests.support.cli_runs import spectop
from tests.support.manual_clock import ManualClock
from tests.support.recordings import DEMO_RECORDING, feed_session, panel_texts, recording_app
from tui.replay import ReplayApp
from tui.widgets.request_detail import RequestDetail

SIZE = (140, 42)


async def test_a_replayed_session_shows_the_panels_the_live_one_showed(tmp_path):
    path = tmp_path / "live.jsonl"
    recorder = Recorder(path, server_url=synthetic.URL, meter=synthetic.METER)
    app = recording_app(recorder)
    async with app.run_test(size=SIZE) as pilot:
        await feed_session(pilot)
        live = await settled_texts(app, pilot)
    recorder.close()

    replay = ReplayApp(read_recording(path), clock=ManualClock())
    async with replay.run_test(size=SIZE) as pilot:
        replay.play_to(replay.recording.duration_s)
        assert "r1" in live["requests"] and "sweep" in live["requests"]
        assert await settled_texts(replay, pilot) == live


async def settled_texts(app, pilot) -> dict:
    """The panels' text once two reads a tenth of a second apart agree: on a loaded machine the
    requests table's columns are widened a refresh after its rows arrive."""
    texts = None
    for _ in range(100):
        await pilot.pause(0.1)
        now = panel_texts(app)
        if now == texts:
            return now
        texts = now
    return texts


def stepped_recording(path) -> Recorder:
    """Polls one a second for 10 s, their busy slots counting up, then a request at 10 s."""
    clock = ManualClock(0.0)
    rec = Recorder(path, server_url=synthetic.URL, meter=synthetic.METER, clock=clock)
    base = synthetic.snapshots()[1]
    for i in range(1, 11):
        clock.t_s = float(i)
        rec.poll(dataclasses.replace(base, taken_at_s=100.0 + i, slots_busy=i))
    rec.requests([synthetic.record()])
    rec.close()
    return rec


async def test_space_pauses_arrows_seek_and_plus_minus_change_the_speed(tmp_path):
    stepped_recording(tmp_path / "steps.jsonl")
    clock = ManualClock(0.0)
    app = ReplayApp(read_recording(tmp_path / "steps.jsonl"), clock=clock)
    polls = lambda: len(app.state.ledger.snapshots)  # noqa: E731
    async with app.run_test(size=SIZE) as pilot:
        clock.advance(2.5)
        app.tick()
        assert app.position_s == 2.5 and polls() == 2 and app.state.latest.slots_busy == 2
        await pilot.press("space")
        clock.advance(5.0)
        app.tick()
        assert app.position_s == 2.5 and app.state.paused  # the source bar says paused, too
        await pilot.press("right")
        assert app.position_s == 7.5 and polls() == 7
        await pilot.press("left", "left")
        assert app.position_s == 0.0 and polls() == 0  # back in time: rebuilt from the start
        await pilot.press("right")
        assert polls() == 5 and app.state.latest.slots_busy == 5
        await pilot.press("space", "plus")
        assert app.speed == 2.0
        clock.advance(1.0)
        app.tick()
        assert app.position_s == 7.0 and polls() == 7
        await pilot.press("minus", "minus")
        assert app.speed == 0.5
        await pilot.press("right")
        assert app.position_s == 10.0 and polls() == 10 and "r1" in app.state.records
        assert "ended" in str(app.replay_bar.render())


async def test_enter_on_a_request_opens_its_detail_and_escape_closes_it():
    app = recording_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await feed_session(pilot)
        table = app.main.requests_table
        table.focus()
        table.move_cursor(row=table.get_row_index("r1"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RequestDetail) and app.screen.record.request_id == "r1"
        figures = str(app.screen.query_one("#request-figures").render())
        assert "request r1" in figures and "committed" in figures
        await pilot.press("escape")
        assert not isinstance(app.screen, RequestDetail)
        table.move_cursor(row=table.get_row_index("slot-0"))
        await pilot.press("enter")  # a slot's row has no detail
        assert not isinstance(app.screen, RequestDetail)


async def open_detail(pilot) -> None:
    await feed_session(pilot)
    app = pilot.app
    # the sweep's toast is cleared while the dashboard, whose toast rack shows it, is the screen: a
    # modal has no rack of its own, so clearing later left the toast to its 5 s timeout, and a
    # loaded machine took the snapshot after it had gone
    app.clear_notifications()
    await pilot.pause()
    assert not app.screen.query(Toast)
    table = app.main.requests_table
    table.focus()
    table.move_cursor(row=table.get_row_index("r1"))
    await pilot.press("enter")
    await pilot.pause(0.3)


def test_request_detail_snapshot(snap_compare):
    assert snap_compare(recording_app(None), terminal_size=SIZE, run_before=open_detail)


async def play_to_end(pilot) -> None:
    app = pilot.app
    app.play_to(app.recording.duration_s)
    await pilot.pause(0.3)
    app.clear_notifications()


@pytest.mark.parametrize("size", [(140, 42), (80, 24)], ids=["wide", "narrow"])
def test_a_recorded_demo_session_replays_with_the_same_panels(snap_compare, size):
    app = ReplayApp(read_recording(DEMO_RECORDING), clock=ManualClock())
    assert snap_compare(app, terminal_size=size, run_before=play_to_end)


def test_report_on_a_recording_prints_the_request_table_and_the_batch_levels():
    run = spectop("report", str(DEMO_RECORDING))
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for header in ("source", "drafted", "accepted", "acceptance", "mJ/token", "TTFT", "gap p99"):
        assert header in out
    assert "energy by batch level" in out and "busy slots" in out
    recording = read_recording(DEMO_RECORDING)
    assert sum(1 for e in recording.entries if type(e.payload).__name__ == "RequestsEntry") > 0
    assert "client" in out or "probe" in out or "log" in out
