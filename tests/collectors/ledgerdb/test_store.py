"""The ledger file: bounded, counted once when two spectops write one server, whole after a kill -9.

Every window here is 10 s at 360 W: 3,600 J = 0.001 kWh, so kWh counts windows by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from collectors.ledgerdb.store import EnergyStore, Window
from tests.support.processes import reaped
from tui.cli import main

URL = "http://gpu:8080"


def window(end_unix_s: float, length_s: float = 10.0) -> Window:
    return Window(URL, end_unix_s - length_s, end_unix_s, 1, 360 * length_s, 100, 0, 0, 0.0, 0.0, 0.0, 0.0)


def reported(path, capsys, since: str = "30d") -> dict:
    assert main(["report", "--since", since, "--ledger", str(path), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_hours_older_than_the_bound_are_dropped(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    now = time.time()
    with EnergyStore(path, keep_days=2) as store:
        store.add([window(now - 3 * 86400)])  # three days old: outside a two-day bound
        assert reported(path, capsys)["kwh"] == pytest.approx(0.001)  # kept until a newer hour comes
        store.add([window(now - 60)])
    assert reported(path, capsys)["kwh"] == pytest.approx(0.001)  # the old hour went; one window left


def test_two_spectops_on_one_server_count_its_joules_once(tmp_path, capsys):
    """An exporter polling at :00 and a dashboard at :05 of each 10 s: their windows overlap half
    each; whichever comes second is refused, so the ledger holds at most the 100 s elapsed (0.01 kWh)."""
    path = tmp_path / "ledger.sqlite"
    start = time.time() - 600
    exporter, dashboard = EnergyStore(path), EnergyStore(path)
    for k in range(1, 11):
        exporter.add([window(start + 10 * k)])
        dashboard.add([window(start + 10 * k + 5)])
    body = reported(path, capsys)
    assert body["recorded_s"] <= 105 and body["kwh"] <= 0.0105
    assert body["kwh"] >= 0.005  # and one of them is counted, not neither


@pytest.mark.slow  # a child process
def test_a_killed_spectop_leaves_what_it_committed(tmp_path, capsys):
    """The child commits 30 windows (0.03 kWh), then is killed -9 without closing the file."""
    path = tmp_path / "ledger.sqlite"
    child = f"""
import os, signal, time
from pathlib import Path
from collectors.ledgerdb.store import EnergyStore, Window
store = EnergyStore(Path({str(path)!r}))
now = time.time() - 600
for k in range(1, 31):
    store.add([Window({URL!r}, now + 10 * k - 10, now + 10 * k, 1, 3600.0, 100, 0, 0, 0.0, 0.0, 0.0, 0.0)])
os.kill(os.getpid(), signal.SIGKILL)
"""
    with reaped(subprocess.Popen([sys.executable, "-c", child])) as proc:
        assert proc.wait(timeout=60) == -9
    assert reported(path, capsys)["kwh"] == pytest.approx(0.03)
