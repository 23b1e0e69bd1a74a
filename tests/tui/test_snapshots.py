"""Snapshot tests of the main screen and a finished sweep, at two terminal sizes.

The app runs without polling; every figure comes from the real llama-server captures, a fixed
meter series and note 25's table (collectors/docs/note25.md), posted as messages, so the screens are deterministic.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings

SIZES = {"wide": (140, 42), "narrow": (80, 24)}


def make_app() -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


async def feed_live(pilot) -> None:
    app = pilot.app
    app.post_message(messages.MeterRead(synthetic.readings()))
    for snap in synthetic.snapshots():
        app.post_message(messages.ServerPolled(snap))
    await pilot.pause()
    app.add_records(
        [
            synthetic.record("draft-simple", "r1", 100.2),
            synthetic.record("draft-simple", "r2", 100.5, "sweep:draft:2"),
        ]
    )
    await pilot.pause()
    app.clear_notifications()


async def feed_sweep(pilot) -> None:
    await feed_live(pilot)
    app = pilot.app
    for event in synthetic.sweep_events():
        app.post_message(messages.SweepProgressed(event))
    await pilot.pause()
    # live traffic after the sweep (the live window restarts when a sweep ends)
    shift = time.monotonic() + 10 - 99.0
    app.post_message(
        messages.MeterRead(
            [
                dataclasses.replace(r, t_s=r.t_s + shift, energy_j=r.energy_j + 1000)
                for r in synthetic.readings()
            ]
        )
    )
    for snap in synthetic.snapshots():
        app.post_message(messages.ServerPolled(dataclasses.replace(snap, taken_at_s=snap.taken_at_s + shift)))
    await pilot.pause()
    await pilot.press("3")
    await pilot.pause(0.2)
    app.clear_notifications()


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_main_screen(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=feed_live)


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_finished_sweep(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=feed_sweep)
