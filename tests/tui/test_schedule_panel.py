"""After a tune, the dashboard's energy panel says the K the schedule gives now and what it saved.

Truth by hand (tests/collectors/tune/test_live.py): under note 25's schedule, 8 requests run
plain; ten one-second windows at 40 W are 400 J, always-draft 1.504 times that: 202 J, 33.5 % saved.
"""

from __future__ import annotations

from collectors.meters import MeterInfo, MeterReading
from collectors.tune.derive import derive_schedule
from tests.support.dashboard import FakeCollector, FakeSampler, wait_until
from tests.support.snapshots import window_snapshot
from tests.support.tune_runs import note25_run
from tui import messages
from tui.app import SpectopApp
from tui.commands._tune_live import attach
from tui.config import Settings

METER = MeterInfo("dcgm", ("gpu0",), "GPU board", "counter", 0.1)


def polls(steps):
    return [
        window_snapshot(
            float(t), url="http://gpu:8080", window_s=1.0 if t else None, window_tokens=250,
            busy_slots_per_decode=8.0, slots_busy=8, slots_total=16, drafting=True, spec_num_steps=steps,
        )
        for t in range(11)
    ]  # fmt: skip


async def shown_after(tmp_path, steps) -> str:
    schedule = derive_schedule(note25_run(tmp_path / "run"), draft_tokens=4)
    settings = Settings(server_url="http://gpu:8080", poll=False)
    app = SpectopApp(settings, FakeCollector(polls(steps)), FakeSampler(METER))
    attach(app.fleet.servers, schedule)
    async with app.run_test(size=(160, 40)) as pilot:
        app.post_message(messages.MeterRead([MeterReading(float(t), 40.0 * t, 40.0) for t in range(11)]))
        for snap in polls(steps):
            app.post_message(messages.ServerPolled(snap))
        await wait_until(pilot, lambda: "vs always-draft" in screen_text(app))
        return screen_text(app)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_the_energy_panel_says_the_tuned_k_and_the_saving(tmp_path):
    shown = await shown_after(tmp_path, None)
    assert "K 0 tuned, not read back" in shown
    assert "saved 202 J, 33.5 % vs always-draft" in shown


async def test_a_server_running_another_k_is_said_in_red_and_not_counted(tmp_path):
    shown = await shown_after(tmp_path, 4)  # SGLang says it runs 4 steps at 8 requests
    assert "K 4 runs, K 0 tuned" in shown
    assert "saved 0 J" in shown
