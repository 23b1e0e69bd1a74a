"""The ledger's drafting figures: the share of judged time drafting paid, and what a schedule would
have saved, against a sweep's curves (note 25's table, tests/support/sweep_rows.py).

Truth by hand. Note 25's plain curve: at 2 requests 39.1 W / 100.2 tok/s = 390.2 mJ/token; at 8,
36.9 W / 339.2 tok/s = 108.79 mJ/token. Two servers draft for 100 one-second windows each:
- A at 2 requests, 27.3 W and 100 tokens a second: 273 mJ/token, 273 / 390.2 = 0.70 of plain:
  drafting saves (below the rule's 0.95), so its 100 s are paid;
- B at 8 requests, 40 W and 250 tokens a second: 160 mJ/token, 160 / 108.79 = 1.471 of plain:
  drafting costs; off, its 4,000 J would have been 4,000 / 1.471 = 2,719.6 J: 1,280.4 J saved.
Drafting paid 100 s of the 200 s judged: 50 %.
"""

from __future__ import annotations

import json
import time

from collectors.ledgerdb.store import EnergyStore
from collectors.ledgerdb.writer import LedgerWriter
from collectors.live.accounting import LiveLedger
from collectors.meters import MeterReading
from collectors.sweep import summary
from tests.support.snapshots import window_snapshot
from tests.support.sweep_rows import note25_rows, points
from tui.cli import main

NOTE25 = summary.summary_of(points(note25_rows()))


def drafting_server(path, url, batch, power_w, tokens_per_s, sweep) -> None:
    """100 one-second polls after a first one (no window), a meter read every 0.5 s."""
    t0 = time.monotonic() - 300
    live = LiveLedger(30.0)
    writer = LedgerWriter(EnergyStore(path), url, sweep)
    for i in range(201):
        live.add_reading(MeterReading(t0 + i / 2, power_w * i / 2, power_w))
        if i % 2 == 0:
            live.add_snapshot(
                window_snapshot(
                    t0 + i / 2,
                    url=url,
                    window_s=1.0 if i else None,
                    window_tokens=tokens_per_s,
                    drafting=True,
                    busy_slots_per_decode=float(batch),
                )
            )
            writer.flush(live)


def report(path, capsys) -> dict:
    assert main(["report", "--since", "1h", "--ledger", str(path), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_drafting_paid_share_and_a_schedules_saving(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    drafting_server(path, "http://a:8080", 2, 27.3, 100, NOTE25)
    drafting_server(path, "http://b:8080", 8, 40.0, 250, NOTE25)
    body = report(path, capsys)
    assert body["judged_s"] == 200
    assert body["drafting_paid_share"] == 0.5
    assert abs(body["schedule_saving_kwh"] * 3.6e6 - 1280.4) < 0.5


def test_without_a_sweep_nothing_is_judged_and_report_says_why(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    drafting_server(path, "http://b:8080", 8, 40.0, 250, None)
    body = report(path, capsys)
    assert (body["drafting_paid_share"], body["schedule_saving_kwh"]) == (None, None)
    assert body["drafting_s"] == 100
    assert main(["report", "--since", "1h", "--ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert "drafting paid  — no sweep was known while recording" in out
