"""The App's parts on their own, without an App: the fleet, the meter hand-over, the sweep controller."""

from __future__ import annotations

from types import SimpleNamespace

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages, workers
from tui.config import Settings
from tui.fleet import Fleet, WatchedServer
from tui.state import LiveState
from tui.sweep_control import SweepController
from tui.sweep_text import sweep_headline


def two_servers(sampler=None) -> Fleet:
    return Fleet(
        [
            WatchedServer.of(f"http://127.0.0.1:{port}", FakeCollector(synthetic.snapshots()), sampler)
            for port in (8080, 8081)
        ]
    )


def test_the_fleet_picks_a_server_once_and_pauses_them_all():
    fleet = two_servers()
    assert fleet.several and fleet.selected == 0
    assert not fleet.select(0) and not fleet.select(2) and not fleet.select(-1)
    assert fleet.select(1) and fleet.watched.url.endswith(":8081") and fleet.state is fleet.servers[1].state
    fleet.pause(True)
    assert all(server.state.paused for server in fleet.servers)


def test_the_fleet_reads_its_meter_from_the_sampler_or_else_from_the_state():
    assert Fleet([WatchedServer.of(synthetic.URL, None, FakeSampler(synthetic.METER))]).meter_info() == (
        synthetic.METER
    )
    replayed = WatchedServer(synthetic.URL, synthetic.URL, None, None, LiveState(30.0, synthetic.METER))
    assert Fleet([replayed]).meter_info() == synthetic.METER  # a replay opens no sampler
    assert Fleet([WatchedServer.of(synthetic.URL, None, None)]).meter_info() is None


def test_meter_readings_are_handed_over_once_and_not_while_paused():
    readings = synthetic.readings(seconds=1.0)
    fleet = two_servers(FakeSampler(synthetic.METER, readings))
    posted: list = []
    workers.read_meters(fleet, posted.append)
    assert [(m.server, len(m.readings)) for m in posted] == [(0, len(readings)), (1, len(readings))]
    assert all(isinstance(m, messages.MeterRead) and m.error is None for m in posted)
    posted.clear()
    workers.read_meters(fleet, posted.append)
    assert posted == []  # nothing new since, and no error: no message for the UI thread to handle
    sampler = fleet.servers[0].sampler
    sampler.failed_ticks, sampler.last_error = 1, "OSError: gone"
    workers.read_meters(fleet, posted.append)  # a new error is news without readings
    assert [(m.server, m.readings, m.error) for m in posted] == [
        (0, [], "OSError: gone"),
        (1, [], "OSError: gone"),
    ]
    for server in fleet.servers:
        server.meter_error = "OSError: gone"  # as the handler keeps it
    posted.clear()
    workers.read_meters(fleet, posted.append)
    assert posted == []  # the same error again is not
    fleet.pause(True)
    posted.clear()
    workers.read_meters(fleet, posted.append)
    assert posted == []


def test_the_sweep_controller_keeps_a_paired_summary_and_tells_the_demo():
    fleet = two_servers()
    told: list[bool] = []
    screen = SimpleNamespace(
        show_energy=lambda energy: None,
        select_tab=lambda tab: None,
        set_sweep_running=lambda running: None,
    )
    sweeps = SweepController(Settings(), fleet, told.append)
    summary = synthetic.sweep_events()[-1].summary
    sweeps.started(screen)
    assert fleet.state.sweep_running and told == [True]
    sweeps.finished(summary, screen)
    assert fleet.state.sweep_summary is summary and not fleet.state.sweep_running and told == [True, False]
    assert fleet.servers[1].state.sweep_summary is None  # the shown server's, not every one's
    assert sweep_headline(summary) == summary.recommendation
