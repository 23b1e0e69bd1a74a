"""Pilot tests: the dashboard driven as a person would, asserting on messages and widget state."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import PointDone, SweepEnded
from collectors.sweep.store import load_run
from tests.tui import synthetic
from tests.tui.conftest import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.help_screen import HelpScreen
from tui.widgets.requests_table import RequestsTable
from tui.widgets.source_bar import SourceBar
from tui.widgets.sweep_dialog import SweepDialog
from tui.widgets.sweep_panel import SweepPanel


def text_of(widget) -> str:
    """What a widget shows on screen, line by line."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def wait_until(pilot, condition, timeout_s: float = 60.0) -> None:
    """Let the app run until `condition()` holds (workers post messages; the poller never ends)."""
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("timed out waiting for the app")


def ended_events(seen) -> list:
    return [
        m.event for m in seen if isinstance(m, messages.SweepProgressed) and isinstance(m.event, SweepEnded)
    ]


def app_with(snapshots, sampler=None, **settings) -> SpectopApp:
    base = Settings(server_url=synthetic.URL, interval_s=0.05, **settings)
    return SpectopApp(base, FakeCollector(snapshots), sampler)


async def test_start_shows_server_meter_and_drafting():
    sampler = FakeSampler(synthetic.METER, synthetic.readings())
    app = app_with(synthetic.snapshots(), sampler)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.8)
        view = app.query_one(SourceBar).view
        assert view.snapshot.model == "tiny-target.gguf" and view.snapshot.drafting
        assert view.meter.name == "dcgm"
        assert app.state.latest.acceptance is not None
        assert len(app.state.power) > 0
        drafting = text_of(app.query_one("#drafting").query_one(".body"))
        assert "acceptance" in drafting and "S1" in drafting


async def test_pause_stops_updates_and_resumes():
    app = app_with(synthetic.snapshots())
    async with app.run_test() as pilot:
        await pilot.pause(0.3)
        await pilot.press("p")
        assert app.state.paused and app.query_one(SourceBar).view.paused
        count = len(app.state.snapshots)
        await pilot.pause(0.3)
        assert len(app.state.snapshots) == count
        await pilot.press("p")
        await pilot.pause(0.3)
        assert len(app.state.snapshots) > count


async def test_failure_shows_in_place_and_recovers():
    ok = synthetic.snapshots()[-1]
    down = dataclasses.replace(ok, status="unreachable", error="cannot reach the server", fix="start it")
    app = app_with([down] * 8 + [ok])
    async with app.run_test() as pilot:
        await pilot.pause(0.15)
        assert app.query_one("#throughput").has_class("-failed")
        assert "cannot reach" in text_of(app.query_one(SourceBar))
        await pilot.pause(0.8)
        assert not app.query_one("#throughput").has_class("-failed")


async def test_void_draft_arm_is_shouted():
    plain = synthetic.snapshots("void")
    app = app_with(plain, draft_url=synthetic.URL)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        warning = app.query_one(SourceBar).view.void_warning
        assert warning and "drafts nothing" in warning
        assert app.query_one("#drafting").has_class("-failed")


async def test_help_screen_and_quit():
    app = app_with(synthetic.snapshots())
    async with app.run_test() as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("3")
        assert app.query_one(TabbedContent).active == "sweep"
        await pilot.press("q")
    assert app.return_code == 0


@pytest.fixture(scope="module")
def sim():
    with Simulator(seed=5, speedup=8.0) as simulator:
        yield simulator


async def test_probe_adds_a_request_row(sim):
    seen = []
    settings = Settings(server_url=sim.draft_url, interval_s=0.2)
    from collectors.servers.auto import AutoCollector

    app = SpectopApp(settings, AutoCollector(sim.draft_url), None)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.pause(0.3)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(isinstance(m, messages.ProbeFinished) for m in seen))
        await pilot.pause(0.1)
        finished = [m for m in seen if isinstance(m, messages.ProbeFinished)]
        assert finished and finished[0].record.committed_tokens == 128
        assert 0 < finished[0].record.acceptance < 1
        table = app.query_one(RequestsTable)
        assert finished[0].record.request_id in [k.value for k in table.rows]


def sweep_app(sim, tmp_path: Path, plan: SweepPlan) -> tuple[SpectopApp, Sampler]:
    meter = open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")
    sampler = Sampler(meter).start()
    settings = Settings(
        server_url=sim.draft_url,
        plain_url=sim.plain_url,
        draft_url=sim.draft_url,
        results_root=tmp_path,
        quick_plan=plan,
        poll=False,
    )
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), sampler), sampler


async def test_sweep_runs_from_the_button_to_the_results(sim, tmp_path):
    plan = SweepPlan(batches=(1, 2), max_tokens=48, passes=1, idle_s=0.3, warmup_tokens=4)
    app, sampler = sweep_app(sim, tmp_path, plan)
    seen = []
    try:
        async with app.run_test(size=(140, 45), message_hook=seen.append) as pilot:
            await pilot.press("s")
            assert isinstance(app.screen, SweepDialog)
            await pilot.click("#dialog-run")
            await pilot.pause(0.2)
            assert app.query_one(TabbedContent).active == "sweep"
            await wait_until(pilot, lambda: ended_events(seen), timeout_s=120)
            await pilot.pause(0.3)
            ended = ended_events(seen)
            assert ended and ended[0].error is None and not ended[0].cancelled
            summary = ended[0].summary
            assert [t["batch"] for t in summary["rows"]] == [1, 2]
            assert app.state.sweep_summary is summary
            panel = app.query_one(SweepPanel)
            assert "done" in text_of(panel.query_one("#sweep-status"))
            assert panel.query_one("#sweep-table").row_count == 2
            assert app.query_one("#sweep-run").disabled is False
            # the sweep's requests join the requests table
            assert sum(1 for r in app.state.records.values() if r.tag.startswith("sweep")) == 3 * (1 + 2)
    finally:
        sampler.stop()
        sampler.meter.close()


async def test_cancel_sweep_keeps_completed_points(sim, tmp_path):
    plan = SweepPlan(batches=(1, 2, 4), max_tokens=256, passes=2, idle_s=0.2, warmup_tokens=4)
    app, sampler = sweep_app(sim, tmp_path, plan)
    seen = []
    try:
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await pilot.press("s")
            await pilot.click("#dialog-run")
            await wait_until(
                pilot,
                lambda: any(
                    isinstance(m, messages.SweepProgressed) and isinstance(m.event, PointDone) for m in seen
                ),
            )
            await pilot.press("c")
            await wait_until(pilot, lambda: ended_events(seen), timeout_s=120)
            await pilot.pause(0.3)
            ended = ended_events(seen)
            assert ended and ended[0].cancelled
            _, rows = load_run(ended[0].run_dir)
            assert 1 <= len(rows) < 18
            assert "cancelled" in text_of(app.query_one("#sweep-status"))
    finally:
        sampler.stop()
        sampler.meter.close()
