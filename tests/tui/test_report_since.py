"""`spectop report --since`: cost with a flat price or a time-of-use table, and bad input in one line.

Truth by hand for the prices: the ledger holds 1 kWh in the hour from 03:00, 1 kWh from 06:00 and
2 kWh from 12:00 (UTC, the zone the test runs in). The table charges 0.10 from 23:00 to 06:30 and
0.40 from 06:30 to 23:00: 03:00 costs 0.10; 06:00 is half at each, 0.25; 12:00 is 2 × 0.40 = 0.80:
1.15 in all. A flat 0.30 gives 4 × 0.30 = 1.20.
"""

from __future__ import annotations

import time

import pytest

from collectors.ledgerdb.store import EnergyStore, Window
from tui.cli import main

KWH_J = 3.6e6


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def window(day_unix_s: int, hour: int, energy_j: float) -> Window:
    end = day_unix_s + hour * 3600 + 60
    return Window("http://gpu:8080", end - 60, end, 1, energy_j, 1000, 0, 0, 0.0, 0.0, 0.0, 0.0)


@pytest.fixture
def ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    yesterday = int(time.time() // 86400 * 86400 - 86400)  # 00:00 UTC yesterday: all hours past
    with EnergyStore(path) as store:
        store.add(
            [window(yesterday, 3, KWH_J), window(yesterday, 6, KWH_J), window(yesterday, 12, 2 * KWH_J)]
        )
    return path


def report(*argv: str) -> list[str]:
    return ["report", "--since", "3d", *argv]


def test_a_time_of_use_table_prices_each_hour_by_its_minutes(ledger, tmp_path, utc, capsys):
    table = tmp_path / "tou.csv"
    table.write_text("# night and day\n23:00-06:30,0.10\n06:30-23:00,0.40\n")
    assert main(report("--ledger", str(ledger), "--price", str(table))) == 0
    out = capsys.readouterr().out
    assert "energy         4.000 kWh" in out
    assert "cost           1.15 at time of use from tou.csv" in out


def test_a_flat_price(ledger, utc, capsys):
    assert main(report("--ledger", str(ledger), "--price", "0.30")) == 0
    assert "cost           1.20 at flat 0.3 per kWh" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["report", "--since", "7x"], "--since '7x' is no age (give e.g. --since 7d, 36h, 90m or 2w)"),
        (["report"], "report needs a DIR (a sweep or a recording) or --since AGE"),
        (report("--ledger", "nowhere.sqlite"), "no energy ledger at nowhere.sqlite"),
        (report("--price", "-1"), "--price -1 is no price"),
        (report("--format", "csv"), "report --since prints a table or JSON, not csv"),
        (["report", "some-run", "--since", "7d"], "report takes a DIR or --since, not both"),
        (["report", "some-run", "--price", "0.3"], "--price and --ledger go with --since"),
    ],
)
def test_bad_input_is_one_line(argv, says, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("00:00-12:00,0.1\n", "no price at 12:00"),
        ("00:00-12:00,0.1\n11:00-00:00,0.2\n", "line 2: '11:00-00:00' overlaps an earlier span"),
        ("00:00-24:00,cheap\n", "line 1: '00:00-24:00,cheap' is not HH:MM-HH:MM,price"),
    ],
)
def test_a_bad_time_of_use_table_names_its_line(ledger, tmp_path, table, says, capsys):
    path = tmp_path / "tou.csv"
    path.write_text(table)
    assert main(report("--ledger", str(ledger), "--price", str(path))) == 2
    err = capsys.readouterr().err
    assert says in err and "HH:MM-HH:MM,price" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", ["dashboard", "watch"])
def test_a_ledger_that_cannot_be_opened_stops_before_anything_starts(command, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    argv = [command, "--ledger", str(blocker / "ledger.sqlite")]
    assert main([*argv, "--", "true"] if command == "watch" else argv) == 2
    err = capsys.readouterr().err
    assert "cannot open the energy ledger" in err and "give another --ledger PATH, or --no-ledger" in err
    assert len(err.strip().splitlines()) == 1, err
