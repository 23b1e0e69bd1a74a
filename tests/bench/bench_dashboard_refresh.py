"""What one message costs the dashboard's UI thread with a full history behind it.

Run by hand (not collected by pytest): `python tests/bench/bench_dashboard_refresh.py [rounds]`.
The app runs headless (`Settings(poll=False)`, the fakes of tests/support) at 140x42 with the requests
tab showing. Its state is filled to a full history (300 polls, 3000 power points, 200 request
records with their stream events, the polls cycling through idle and busy captures so there is an
idle baseline to find). Then each round hands it, in turn: one `MeterRead` (5 new readings, as the
2 Hz reader sees a 10 Hz meter); a "steady" poll, where the same two slots are still decoding
(their token counts move); and a "slots change" poll, where one request ends and another starts
(a row goes, a row comes).

What is measured: the UI thread's CPU time (`time.thread_time`) from calling the App's handler
until the screen has repainted, that is the handler plus `pilot.pause()`, which lets every
queued message run and then composits and renders what changed. "nothing" is a pause with no
message, the floor of that measurement. Only the App's handler names, messages and `add_records`
are used, so the script runs unchanged on older and newer code.
A last row runs the same history with polling on, as the dashboard is used: a meter read that
follows a poll goes into the state and is repainted with the next poll.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
import sys
import time

from collectors.meters import MeterReading
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings

POLLS, POWER_POINTS, RECORDS, METER_HZ = 300, 3000, 200, 10
T0_S = 1000.0


def poll_at(t_s: float, i: int):
    """The three real captures (idle, busy, idle) in turn, re-stamped."""
    snap = synthetic.snapshots()[i % 3]
    return dataclasses.replace(snap, taken_at_s=t_s)


class Timeline:
    """Meter readings at 10 Hz (40 W, give or take 5) and polls at 1 Hz, continuing where the last one stopped."""

    def __init__(self) -> None:
        self.meter_t_s, self.energy_j, self.polls = T0_S, 0.0, 0

    def readings(self, n: int) -> list[MeterReading]:
        out = []
        for _ in range(n):
            self.meter_t_s += 1 / METER_HZ
            power_w = 40.0 + 5.0 * math.sin(self.meter_t_s)  # moving, so every read redraws the panel
            self.energy_j += power_w / METER_HZ
            out.append(MeterReading(self.meter_t_s, self.energy_j, power_w))
        return out

    def poll(self, busy_slot_tokens: tuple[tuple[int, int], ...] | None = None):
        """The next poll: the captures in turn, or the busy capture with these slots decoding."""
        self.polls += 1
        if busy_slot_tokens is None:
            return poll_at(T0_S + self.polls, self.polls)
        busy = poll_at(T0_S + self.polls, 1)
        return dataclasses.replace(busy, busy_slot_tokens=busy_slot_tokens)


async def measure(pilot, handle) -> float:
    t0 = time.thread_time()
    handle()
    await pilot.pause()
    return 1000 * (time.thread_time() - t0)


async def run(rounds: int) -> dict[str, list[float]]:
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    timeline = Timeline()
    costs: dict[str, list[float]] = {"meter read": [], "steady poll": [], "slots change": [], "nothing": []}
    async with app.run_test(size=(140, 42)) as pilot:
        # full history: the meter first, so every record finds power points to split
        app.on_meter_read(messages.MeterRead(timeline.readings(POWER_POINTS)))
        for _ in range(POLLS):
            app.on_server_polled(messages.ServerPolled(timeline.poll()))
        span_s = POLLS - 5
        app.add_records(
            synthetic.record("draft-simple", f"r{i}", T0_S + 1 + span_s * i / RECORDS, "probe")
            for i in range(RECORDS)
        )
        app.on_server_polled(messages.ServerPolled(timeline.poll(((0, 0), (3, 0)))))
        await pilot.pause()
        for i in range(rounds):
            meter = messages.MeterRead(timeline.readings(5))
            costs["meter read"].append(await measure(pilot, lambda m=meter: app.on_meter_read(m)))
            slot = i % 2  # slot 0 or 1 decodes beside slot 3, then hands over to the other
            steady = messages.ServerPolled(timeline.poll(((slot, 40 * i + 20), (3, 40 * i + 20))))
            costs["steady poll"].append(await measure(pilot, lambda p=steady: app.on_server_polled(p)))
            change = messages.ServerPolled(timeline.poll(((1 - slot, 0), (3, 40 * i + 40))))
            costs["slots change"].append(await measure(pilot, lambda p=change: app.on_server_polled(p)))
            costs["nothing"].append(await measure(pilot, lambda: None))
    return costs


async def run_polling(rounds: int) -> dict[str, list[float]]:
    """The same history with polling on (an hour between the poller's own polls, so only the
    messages posted here arrive): a meter read that follows a poll, as they do at 2 Hz beside 1 Hz
    polls, goes into the state and waits for the next poll to be repainted."""
    settings = Settings(server_url=synthetic.URL, poll=True, interval_s=3600)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    timeline = Timeline()
    costs: dict[str, list[float]] = {"meter read, polling on": []}
    async with app.run_test(size=(140, 42)) as pilot:
        app.on_meter_read(messages.MeterRead(timeline.readings(POWER_POINTS)))
        for _ in range(POLLS):
            app.on_server_polled(messages.ServerPolled(timeline.poll()))
        await pilot.pause()
        for i in range(rounds):
            app.on_server_polled(messages.ServerPolled(timeline.poll(((0, 40 * i), (3, 40 * i)))))
            await pilot.pause()
            meter = messages.MeterRead(timeline.readings(5))
            costs["meter read, polling on"].append(await measure(pilot, lambda m=meter: app.on_meter_read(m)))
    return costs


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    costs = asyncio.run(run(rounds))
    costs.update(asyncio.run(run_polling(rounds)))
    print(f"UI-thread ms per message, full history, {rounds} rounds (handler + repaint):")
    for name, values in costs.items():
        values = sorted(values)
        p90 = values[int(0.9 * (len(values) - 1))]
        print(f"  {name:<12} median {statistics.median(values):6.2f}  p90 {p90:6.2f}")


if __name__ == "__main__":
    main()
