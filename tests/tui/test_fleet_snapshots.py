"""Snapshot tests of a dashboard watching three servers: the summary table above the chosen one's panels.

Two servers share one meter (their joules split by tokens, said so in the meter column), the
third has its own. The app runs without polling; the real llama-server captures and a fixed meter
series are posted as messages for each server, so the screen is deterministic.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.fleet import WatchedServer

SIZES = {"wide": (140, 42), "narrow": (80, 24)}
URLS = ("http://10.0.0.1:8080", "http://10.0.0.1:8081", "http://10.0.0.2:8000")
NAMES = ("gpu0-llama", "gpu0-small", "gpu1-vllm")


def make_app() -> SpectopApp:
    shared, own = FakeSampler(synthetic.METER), FakeSampler(synthetic.METER)
    fleet = [
        WatchedServer.of(url, FakeCollector(synthetic.snapshots()), sampler, name=name)
        for url, name, sampler in zip(URLS, NAMES, (shared, shared, own))
    ]
    return SpectopApp(Settings(server_url=URLS[0], poll=False), None, None, fleet=fleet)


async def feed_fleet(pilot) -> None:
    app = pilot.app
    for index, url in enumerate(URLS):
        power_w = 60.0 if index == 2 else 40.0
        app.post_message(messages.MeterRead(synthetic.readings(power_w=power_w), server=index))
        backend = "vllm" if index == 2 else "llama.cpp"
        for snap in synthetic.snapshots():
            app.post_message(
                messages.ServerPolled(dataclasses.replace(snap, url=url, backend=backend), server=index)
            )
    await pilot.pause()
    app.clear_notifications()


async def feed_and_pick_the_third(pilot) -> None:
    await feed_fleet(pilot)
    await pilot.press("down", "down", "enter")
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_fleet_summary(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=feed_fleet)


def test_fleet_third_server_picked(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZES["wide"], run_before=feed_and_pick_the_third)
