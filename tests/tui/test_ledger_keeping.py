"""The dashboard keeps the energy ledger while it runs, and `spectop report --since` reads it back.

Truth by hand: a steady 300 W read every 0.1 s for 20 s, and twenty 1-s polls at 2 requests per
decode with 60 tokens each: 20 × 300 J = 6,000 J (6,000 / 3.6e6 = 0.0016667 kWh) for 1,200 tokens,
6,000,000 mJ / 1,200 = 5,000 mJ/token, all of it at batch level 2.
"""

from __future__ import annotations

import json
import time

from collectors.ledgerdb.store import EnergyStore
from collectors.meters import MeterReading
from tests.support import synthetic
from tests.support.dashboard import FakeSampler
from tests.support.snapshots import window_snapshot
from tui import messages
from tui.app import SpectopApp
from tui.cli import main
from tui.commands._report_ledger import kept
from tui.config import Settings

URL = "http://gpu-3:8080"


async def test_the_dashboard_writes_the_ledger_that_report_reads(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    t0 = time.monotonic() - 60  # a minute ago: inside --since 1h
    readings = [MeterReading(t0 + i / 10, 300 * i / 10, 300.0) for i in range(201)]
    app = SpectopApp(Settings(server_url=URL, poll=False), None, FakeSampler(synthetic.METER))
    with kept(EnergyStore(path), app.fleet.servers):
        async with app.run_test(size=(120, 40)) as pilot:
            app.post_message(messages.MeterRead(readings))
            for t in range(1, 21):
                snap = window_snapshot(
                    t0 + t, url=URL, window_tokens=60, slots_busy=2, busy_slots_per_decode=2.0
                )
                app.post_message(messages.ServerPolled(snap))
            await pilot.pause()
    assert main(["report", "--since", "1h", "--ledger", str(path), "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["tokens"] == 1200
    assert abs(body["kwh"] - 6000 / 3.6e6) < 1e-9
    assert body["mj_per_token"] == 5000.0
    assert [(lv["batch_level"], lv["tokens"]) for lv in body["batch_levels"]] == [(2, 1200)]
