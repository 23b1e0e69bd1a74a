"""Pilot tests: the dashboard driven as a person would, asserting on messages and widget state."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.sweep.codec import to_json
from collectors.sweep.events import PointDone, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.store import load_run
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.help_screen import HelpScreen
from tui.widgets.requests_table import RequestsTable
from tui.widgets.source_bar import SourceBar
from tui.widgets.sweep_dialog import SweepDialog
from tui.widgets.sweep_panel import SweepPanel


async def wait_for_group(pilot, group: str) -> None:
    """Wait for the workers of one group to finish (never the poller's: it runs until the app ends)."""
    workers = [w for w in pilot.app.workers if w.group == group]
    if workers:  # none left: they finished already (an empty list would wait for the poller too)
        await pilot.app.workers.wait_for_complete(workers)
    await pilot.pause()


def spy(obj, *names: str) -> list[str]:
    """Record calls of `obj`'s methods `names` (still calling them)."""
    calls: list[str] = []
    for name in names:
        original = getattr(obj, name)

        def wrapper(*args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        setattr(obj, name, wrapper)
    return calls


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
        await wait_until(
            pilot,
            lambda: (
                app.state.ledger.power
                and app.query_one(SourceBar).view
                and app.query_one(SourceBar).view.snapshot
                and app.query_one("#drafting").view
            ),
        )
        view = app.query_one(SourceBar).view
        assert view.snapshot.model == "tiny-target.gguf" and view.snapshot.drafting
        assert view.meter.name == "dcgm"
        assert app.state.latest.acceptance is not None
        assert len(app.state.ledger.power) > 0
        drafting = text_of(app.query_one("#drafting"))
        assert "acceptance" in drafting and "S1" in drafting


async def test_pause_stops_updates_and_resumes():
    app = app_with(synthetic.snapshots())
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.state.ledger.snapshots)
        await pilot.press("p")
        await pilot.pause()  # a poll already posted is still handled
        assert app.state.paused and app.query_one(SourceBar).view.paused
        count = len(app.state.ledger.snapshots)
        await pilot.pause(0.25)  # what must not happen has no event to wait for: give it 5 intervals
        assert len(app.state.ledger.snapshots) == count
        await pilot.press("p")
        await wait_until(pilot, lambda: len(app.state.ledger.snapshots) > count)
        assert not app.query_one(SourceBar).view.paused


async def test_failure_shows_in_place_and_recovers():
    ok = synthetic.snapshots()[-1]
    down = dataclasses.replace(ok, status="unreachable", error="cannot reach the server", fix="start it")
    app = app_with([down])
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: app.query_one("#throughput").has_class("-failed"))
        assert "cannot reach" in text_of(app.query_one(SourceBar))
        app.fleet.collector.snapshots = [ok]  # the server comes back
        await wait_until(pilot, lambda: not app.query_one("#throughput").has_class("-failed"))
        assert app.state.latest.ok and "cannot reach" not in text_of(app.query_one(SourceBar))


async def test_void_draft_arm_is_shouted():
    plain = synthetic.snapshots("void")
    app = app_with(plain, draft_url=synthetic.URL)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.query_one("#drafting").view)
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
        await wait_until(pilot, lambda: app.state.latest is not None)
        await pilot.press("r")
        await wait_for_group(pilot, "probe")
        await wait_until(pilot, lambda: any(isinstance(m, messages.ProbeFinished) for m in seen))
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


@pytest.mark.slow
async def test_sweep_runs_from_the_button_to_the_results(sim, tmp_path):
    plan = SweepPlan(batches=(1, 2), max_tokens=48, passes=1, idle_s=0.3, warmup_tokens=4)
    app, sampler = sweep_app(sim, tmp_path, plan)
    seen = []
    try:
        async with app.run_test(size=(140, 45), message_hook=seen.append) as pilot:
            await pilot.press("s")
            assert isinstance(app.screen, SweepDialog)
            await pilot.click("#dialog-run")
            await wait_until(pilot, lambda: app.query_one(TabbedContent).active == "sweep")
            await wait_for_group(pilot, "sweep")
            await wait_until(pilot, lambda: ended_events(seen))
            ended = ended_events(seen)
            assert ended and ended[0].error is None and not ended[0].cancelled
            summary = to_json(ended[0].summary)
            assert [t["batch"] for t in summary["rows"]] == [1, 2]
            assert app.state.sweep_summary is ended[0].summary
            panel = app.query_one(SweepPanel)
            assert "done" in text_of(panel.query_one("#sweep-status"))
            assert panel.query_one("#sweep-table").row_count == 2
            assert app.query_one("#sweep-run").disabled is False
            # the sweep's requests join the requests table, each with the batch it ran at
            assert sum(1 for r in app.state.records.values() if r.tag.startswith("sweep")) == 3 * (1 + 2)
            await pilot.press("1")  # the Requests tab
            await pilot.pause()
            table = app.query_one(RequestsTable)
            lines = text_of(table).splitlines()
            batch_at = lines[0].index("batch")
            batches = [line[batch_at : batch_at + 5].strip() for line in lines[1:] if " sweep" in line]
            assert batches and "—" not in batches, "\n".join(lines)
    finally:
        sampler.stop()
        sampler.meter.close()


@pytest.mark.slow
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
            await wait_for_group(pilot, "sweep")
            await wait_until(pilot, lambda: ended_events(seen))
            ended = ended_events(seen)
            assert ended and ended[0].cancelled
            _, rows = load_run(ended[0].run_dir)
            assert 1 <= len(rows) < 18
            assert "cancelled" in text_of(app.query_one("#sweep-status"))
    finally:
        sampler.stop()
        sampler.meter.close()


def quiet_app() -> SpectopApp:
    """No polling: data arrives only as the messages a test posts."""
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


def records(n: int) -> list:
    return [synthetic.record("draft-simple", f"r{i}", 100.2 + i / 10) for i in range(n)]


async def test_a_meter_read_leaves_the_requests_table_and_latency_alone():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]
        app.post_message(messages.MeterRead(synthetic.readings()))
        app.post_message(messages.ServerPolled(busy))
        app.add_records(records(5))
        await pilot.pause()
        table, latency = app.query_one(RequestsTable), app.query_one("#latency-panel")
        calls = spy(
            table, "update_cell", "add_row", "remove_row", "clear", "sort", "show_slots", "show_records"
        )
        latency_view, power_view = latency.view, app.query_one("#power").view
        later = [
            dataclasses.replace(r, t_s=r.t_s + 10, energy_j=r.energy_j + 500) for r in synthetic.readings()
        ]
        app.post_message(messages.MeterRead(later))
        await pilot.pause()
        assert app.query_one("#power").view != power_view  # the read did arrive
        assert calls == [] and latency.view is latency_view
        assert table.row_count == 5 + len(busy.busy_slot_tokens)


async def test_a_poll_rewrites_only_the_cells_that_changed():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]
        app.add_records(records(200))
        for _ in range(2):  # the second poll gives the slots their first rate (0.0 tok/s)
            app.post_message(messages.ServerPolled(busy))
        await pilot.pause()
        table, latency = app.query_one(RequestsTable), app.query_one("#latency-panel")
        # the slot rows on screen, rendered and cached; a loaded machine can lay the 200 rows out
        # after the first scroll (which then stops at the old end), so scroll until they show
        for _ in range(50):
            table.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            if "slot 3" in text_of(table):
                break
        assert "slot 3" in text_of(table)
        calls = spy(table, "update_cell", "_rewrite_cells", "add_row", "remove_row", "clear", "sort")
        latency_view = latency.view
        app.post_message(messages.ServerPolled(busy))  # nothing moved
        await pilot.pause()
        assert calls == [] and latency.view is latency_view
        # slot 3 decodes 20 more tokens in the next second: its tokens and tok/s, nothing else
        tokens = tuple((slot, n + 20 if slot == 3 else n) for slot, n in busy.busy_slot_tokens)
        app.post_message(messages.ServerPolled(dataclasses.replace(busy, busy_slot_tokens=tokens)))
        await pilot.pause()
        assert calls == ["_rewrite_cells"]
        assert table.get_cell("slot-3", "tokens") == "69" and table.get_cell("slot-3", "tok_s") == "20.0"
        assert table.row_count == 200 + 2
        shown = [line.split() for line in text_of(table).splitlines()]
        assert ["slot", "3", "server", "69", "—", "—", "2", "—", "20.0"] in [line[:9] for line in shown]


async def test_a_request_handing_over_to_another_slot_adds_and_removes_no_row():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]
        app.add_records(records(20))
        slot_a, slot_b = (busy.busy_slot_tokens[0][0], 7)
        on = lambda *slots: dataclasses.replace(busy, busy_slot_tokens=tuple((s, 40) for s in slots))  # noqa: E731
        app.post_message(messages.ServerPolled(on(slot_a, slot_b)))  # both seen once
        await pilot.pause()
        table = app.query_one(RequestsTable)
        calls = spy(table, "_rewrite_cells", "add_row", "remove_row", "clear")
        app.post_message(messages.ServerPolled(on(slot_b)))  # slot a's request ends
        app.post_message(messages.ServerPolled(on(slot_a)))  # a new one starts there as b's ends
        await pilot.pause()
        assert calls and set(calls) == {"_rewrite_cells"}
        assert table.row_count == 20 + 2
        assert str(table.get_cell(f"slot-{slot_b}", "tokens")) == "idle"
        assert table.get_cell(f"slot-{slot_a}", "tokens") == "40"
        shown = [line.split()[:4] for line in text_of(table).splitlines()]  # as drawn: no stale cell
        assert ["slot", str(slot_b), "server", "idle"] in shown
        assert ["slot", str(slot_a), "server", "40"] in shown


async def test_sorting_holds_as_rows_arrive():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        app.add_records(records(3))
        table = app.query_one(RequestsTable)
        await pilot.click("#requests-table", offset=(12, 0))  # the "tokens" header: largest first
        assert table._sort == ("tokens", True)
        longest = dataclasses.replace(records(1)[0], request_id="long", committed_tokens=500)
        app.add_records([longest])
        await pilot.pause()
        assert table.coordinate_to_cell_key((0, 0)).row_key.value == "long"
        assert table.get_row_at(0)[2] == "500"


async def test_a_panel_that_grows_a_line_is_laid_out_again():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        app.post_message(messages.MeterRead(synthetic.readings()))
        await pilot.pause()
        body = app.query_one("#power")
        assert "60.0 W" in text_of(body) and "lost" not in text_of(body)
        app.post_message(messages.MeterRead([], error="meter lost"))  # a fourth line
        await pilot.pause()
        assert "meter lost" in text_of(body) and app.query_one("#power").has_class("-failed")


async def test_slot_ids_that_change_every_poll_keep_no_more_rows_than_the_server_has_slots():
    app = quiet_app()
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]
        assert busy.slots_total is not None
        for poll in range(300):  # a server that names its two busy slots anew every poll
            ids = ((1000 + 2 * poll, 10), (1001 + 2 * poll, 20))
            app.post_message(messages.ServerPolled(dataclasses.replace(busy, busy_slot_tokens=ids)))
        await pilot.pause()
        table = app.query_one(RequestsTable)
        assert table.row_count == busy.slots_total  # not 600
        shown = text_of(table)
        assert "slot 1599" in shown and "slot 1598" in shown  # the latest two, busy
        assert "slot 1000 " not in shown
