"""The demo's traffic waits for the dashboard's idle baseline.

The fault: "idle not measured yet" (and net mJ/token `—`) stayed for a whole demo in one start of
two. The baseline is the median power over polls that saw no busy slot, from 10 readings up
(collectors/live/accounting.py), and the demo's traffic never pauses once it runs; the traffic
started on a 4 s timer set before the dashboard had even imported Textual, so a slow start left
fewer than 10 idle readings for good. Now the dashboard says when it knows the baseline and the
traffic starts then: these tests hold the order of the two, with no timer in them.
"""

from __future__ import annotations

import dataclasses
import threading

from collectors.meters import MeterReading
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of
from tui import messages
from tui.app import SpectopApp
from tui.commands._demo_dashboard import DemoTraffic
from tui.config import Settings


def idle_poll(t_s: float):
    """A poll that saw no busy slot and no token over the second before `t_s`."""
    return dataclasses.replace(
        synthetic.snapshots()[2],
        taken_at_s=t_s,
        window_s=1.0,
        slots_busy=0,
        window_tokens=0,
        busy_slot_tokens=(),
    )


def steady(t0_s: float, n: int, power_w: float) -> list[MeterReading]:
    """`n` readings at 10 Hz from `t0_s`, at `power_w` (so the energy grows by power_w / 10 each)."""
    return [MeterReading(t0_s + i / 10, power_w * i / 10, power_w) for i in range(n)]


async def test_the_dashboard_says_once_when_it_knows_the_idle_baseline():
    told: list[float] = []
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(
        settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER), on_idle=told.append
    )
    async with app.run_test(size=(140, 42)) as pilot:
        power = app.query_one("#power")
        # one idle second, read at 10 Hz from 100.0 to 100.5: 6 readings, fewer than the 10 the
        # baseline needs, so the demo must not start its traffic yet
        app.post_message(messages.ServerPolled(idle_poll(100.0)))
        app.post_message(messages.ServerPolled(idle_poll(101.0)))
        app.post_message(messages.MeterRead(steady(100.0, 6, 42.0)))
        await pilot.pause()
        assert told == [] and "not measured yet" in text_of(power)
        # the rest of that second, 100.6 to 101.0: 11 idle readings of 42 W, median 42 W
        app.post_message(messages.MeterRead(steady(100.6, 5, 42.0)))
        await pilot.pause()
        assert told == [42.0]
        assert "42.0 W" in text_of(power) and "not measured yet" not in text_of(power)
        app.post_message(messages.ServerPolled(idle_poll(102.0)))
        app.post_message(messages.MeterRead(steady(101.1, 10, 42.0)))
        await pilot.pause()
        assert told == [42.0]  # told once: the traffic is started once


class Generator:
    """What DemoTraffic needs of a TrafficGenerator: stop."""

    def __init__(self, started: list[Generator]) -> None:
        started.append(self)
        self.stopped = threading.Event()

    def stop(self) -> None:
        self.stopped.set()


def test_the_demo_traffic_starts_when_idle_is_known_and_pauses_for_a_sweep():
    started: list[Generator] = []
    demo = DemoTraffic(lambda: Generator(started), wait_max_s=3600)  # type: ignore[arg-type, return-value]
    try:
        assert started == []  # however long the dashboard takes to start
        demo.idle_known(42.0)
        assert len(started) == 1
        demo.idle_known(42.0)
        assert len(started) == 1
        demo.sweep(True)
        assert started[0].stopped.wait(5) and demo.running is None
        demo.sweep(False)  # the sweep measured idle itself
        assert len(started) == 2 and demo.running is started[1]
    finally:
        demo.stop()
    assert started[1].stopped.is_set()


def test_a_sweep_before_the_baseline_holds_the_traffic_until_it_ends():
    started: list[Generator] = []
    demo = DemoTraffic(lambda: Generator(started), wait_max_s=3600)  # type: ignore[arg-type, return-value]
    try:
        demo.sweep(True)
        demo.idle_known(42.0)  # the sweep's idle measurement: the sweep still runs
        assert started == []
        demo.sweep(False)
        assert len(started) == 1
    finally:
        demo.stop()


def test_a_meter_that_never_gives_a_baseline_holds_the_traffic_only_so_long():
    started: list[Generator] = []
    demo = DemoTraffic(lambda: Generator(started), wait_max_s=0.01)  # type: ignore[arg-type, return-value]
    try:
        for _ in range(500):  # the fallback timer's thread starts it; waited for, not slept on
            if started:
                break
            threading.Event().wait(0.01)
        assert len(started) == 1
    finally:
        demo.stop()
