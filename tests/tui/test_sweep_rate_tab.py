"""The Sweep tab with open-loop points: the dialog takes rates (and an arrival process) and still
fits an 80×24 terminal; a finished run shows each rate under the batches, "2/s" where a batch
shows B, and its open-loop crossover and recommendation. The saved run is note 25's figures at
rates whose plain points had 1, 2 and 4 in flight (tests/support/sweep_rows.py `rate_rows`), so
its recommendation is note 25's: draft at ≤ 2, turn it off from 4."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual.widgets import Button, DataTable, Input, Static

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, wait_until
from tests.support.sweep_rows import rate_rows
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.sweep_dialog import SweepDialog


def make_app() -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


def plain_text(widget: Static) -> str:
    content = widget.render()
    return content.plain if isinstance(content, Text) else str(content)


async def test_the_dialog_takes_rates_and_still_fits_80_by_24() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.action_sweep()
        await wait_until(pilot, lambda: isinstance(app.screen, SweepDialog))
        dialog = app.screen
        assert isinstance(dialog, SweepDialog)
        run = dialog.query_one("#dialog-run", Button).region
        assert run.height == 1 and run.bottom <= 24  # the buttons are on screen, under the new row
        dialog.query_one("#rates", Input).value = "fast"
        dialog.query_one("#dialog-run", Button).press()
        await pilot.pause()
        assert "--rate must be comma-separated numbers" in plain_text(
            dialog.query_one("#dialog-error", Static)
        )
        # rates alone (no batches), bursty arrivals
        dialog.query_one("#plain", Input).value = "http://127.0.0.1:9"
        dialog.query_one("#draft", Input).value = "http://127.0.0.1:9"
        dialog.query_one("#batches", Input).value = ""
        dialog.query_one("#rates", Input).value = "2,4 bursty:3"
        request = dialog.request()
        assert request.plan.batches == () and request.plan.rates == (2.0, 4.0)
        assert request.plan.arrivals == "bursty:3"
        dialog.query_one("#rates", Input).value = "1"
        assert dialog.request().plan.arrivals == "poisson"


async def test_a_saved_open_loop_run_shows_each_rate_and_its_recommendation(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rate_rows()))
    app = make_app()
    async with app.run_test(size=(140, 42)) as pilot:
        app.action_sweep()
        await wait_until(pilot, lambda: isinstance(app.screen, SweepDialog))
        dialog = app.screen
        dialog.query_one("#saved-run", Input).value = str(run_dir)
        dialog.query_one("#dialog-show", Button).press()
        table = app.main.query_one("#sweep-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == 3)
        first = [str(table.get_row_at(i)[0]) for i in range(3)]
        assert first == ["0.5/s", "1/s", "2/s"]
        # 1/s: note 25's B=2 figures, plain 100.2 tok/s and 391 mJ/token against draft 125.5 and 279
        assert [str(c) for c in table.get_row_at(1)][1:7] == [
            "100.2",
            "125.5",
            "1.25x",
            "390",
            "279",
            "0.71x",
        ]
        verdict = plain_text(app.main.query_one("#sweep-verdict", Static))
        assert "Open-loop recommendation: draft at ≤ 2 concurrent requests, turn it off from 4." in verdict
        assert "Open-loop energy crossover ≈ 3.26 requests in flight" in verdict
        assert "no valid paired points" not in verdict  # no closed-loop verdict without batches
