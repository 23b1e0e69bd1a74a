"""The drafting panel as rendered: every drafted position's survival, so 1 + Σ S_j is the G shown,
and Eq. 5's advice on screen at the default terminal sizes (not only in the panel's `lines()`).

The window is made by hand: 100 decode steps drafting 4 positions each (400 drafted), of which
76, 56, 41 and 22 steps accepted up to position 1, 2, 3, 4, so 195 accepted. Then
S = 0.76, 0.56, 0.41, 0.22 and G = 1 + 195 / 100 = 2.95 = 1 + 0.76 + 0.56 + 0.41 + 0.22.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tui.app import SpectopApp
from tui.config import Settings

SENTENCE = "draft-max 2 → 4 costs 14 % more per round and adds 0.63 tokens: keep 4"


def make_app() -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


def window() -> object:
    return dataclasses.replace(
        synthetic.snapshots()[-1],
        drafting=True,
        window_drafted=400,
        window_accepted=195,
        window_steps=100,
        window_per_position=(76, 56, 41, 22),
    )


def panel_text(app: SpectopApp) -> str:
    """The drafting panel's cells as the screen shows them, border included, one line per row."""
    region = app.main.drafting_panel.region
    strips = app.screen._compositor.render_strips()
    return "\n".join(strips[y].text[region.x : region.right] for y in range(region.y, region.bottom))


def inside(text: str) -> str:
    """The panel's rows joined into one string: borders and wrapping gone."""
    rows = [row.strip().strip("│").strip() for row in text.splitlines()[1:-1]]
    return " ".join(r for r in rows if r)


async def show(app: SpectopApp, pilot) -> str:
    # a draft-length sweep measured J_2 = 984.5 and J_4 = 1123.44 mJ per round (test_sweep_arms_tab)
    app.main.drafting_panel.set_round_energy({"2": 984.5, "4": 1123.44})
    snap = window()
    app.main.show_snapshot(snap, snap, [], None)
    for _ in range(3):  # the view, then the panels' row fitted to it, then its repaint
        await pilot.pause()
    return panel_text(app)


@pytest.mark.parametrize("size", [(180, 50), (240, 70), (120, 40), (100, 45)])
async def test_survival_adds_up_to_g_and_the_advice_is_on_screen(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        shown = inside(await show(app, pilot))
        assert "G 2.95" in shown
        # every position: 1 + 0.76 + 0.56 + 0.41 + 0.22 = 2.95, the G shown
        survival = re.search(r"S1–4 \S+ ((?:\d+ )+)%", shown)
        assert survival is not None, shown
        assert [int(v) for v in survival[1].split()] == [76, 56, 41, 22]
        assert 1 + sum(int(v) for v in survival[1].split()) / 100 == pytest.approx(2.95)
        # Eq. 5 with the live S: G_2 = 1 + 0.76 + 0.56 = 2.32 and 2 → 4 adds 0.41 + 0.22 = 0.63
        # tokens, so it may cost up to 0.63 / 2.32 = 27 % more per round; it costs
        # 1123.44 / 984.5 − 1 = 14 %: keep 4. The whole sentence, wrapped inside the panel.
        assert "advice " + SENTENCE in shown


async def test_a_short_terminal_shows_the_advice_on_the_panels_border() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        text = await show(app, pilot)
        bottom = text.splitlines()[-1]
        assert "advice: keep 4" in bottom  # the verdict, on the bottom border the panel always has
        assert "S1–4" in inside(text)


async def test_a_wrapped_energy_verdict_grows_the_panels_row_to_show_the_schedules_saving() -> None:
    """After a tune the energy panel holds the verdict and the schedule's two lines; a verdict that
    wraps onto three rows pushed the saving below the box at 160x42 (as `screenshots/tune.svg` once
    caught). The panels' row grows to the tallest text, not only the drafting panel's."""
    from collectors.live.verdict import LiveEnergy
    from collectors.tune.view import NOT_READ_BACK, ScheduleView

    verdict = "drafting breaks even (-2 %, within 5 %) at 5.3 requests (vs the sweep's plain curve)"
    schedule = ScheduleView("K 4 at 1-3, off from 4", 8, 0, None, NOT_READ_BACK, 1234.0, 3000.0, 12)
    app = make_app()
    async with app.run_test(size=(160, 42)) as pilot:
        app.main.show_energy(LiveEnergy(9.0, 163.0, None, 900, 7.9, verdict, schedule=schedule))
        snap = synthetic.snapshots()[-1]
        app.main.show_snapshot(snap, snap, [], None)  # a poll: the panels' row is fitted after it
        for _ in range(3):
            await pilot.pause()
        region = app.main.energy_panel.region
        strips = app.screen._compositor.render_strips()
        shown = " ".join(strips[y].text[region.x : region.right] for y in range(region.y, region.bottom))
        assert "K 0 tuned" in shown and "saved 1,234 J" in shown, shown


async def test_the_panels_row_is_fitted_again_when_a_poll_changes_the_rows_a_text_needs() -> None:
    """Fitted once at start; a later poll whose energy text wraps onto more rows grows the row, and
    one whose text is short again gives the room back to the tabs (polls with the same rows do not
    fit it again)."""
    from collectors.live.verdict import LiveEnergy
    from collectors.tune.view import NOT_READ_BACK, ScheduleView

    verdict = "drafting breaks even (-2 %, within 5 %) at 5.3 requests (vs the sweep's plain curve)"
    schedule = ScheduleView("K 4 at 1-3, off from 4", 8, 0, None, NOT_READ_BACK, 1234.0, 3000.0, 12)
    app = make_app()
    async with app.run_test(size=(160, 42)) as pilot:
        snap = synthetic.snapshots()[-1]
        for _ in range(3):
            await pilot.pause()
        panels = app.main.query_one("#panels")
        short_height = panels.region.height
        app.main.show_energy(LiveEnergy(9.0, 163.0, None, 900, 7.9, verdict, schedule=schedule))
        app.main.show_snapshot(snap, snap, [], None)
        for _ in range(3):
            await pilot.pause()
        assert panels.region.height > short_height
        app.main.show_energy(LiveEnergy(9.0, 163.0, None, 900, 7.9, "no sweep yet"))
        app.main.show_snapshot(snap, snap, [], None)
        for _ in range(3):
            await pilot.pause()
        assert panels.region.height == short_height
