"""`spectop export` keeps the energy ledger: each server with its own meter gets its windows; servers
sharing one meter keep none (their joules are split by tokens only over the rolling window).

Truth by hand: server a on a 40 W meter makes 300 tokens a second, server b on a 20 W meter 100;
ten 1-s windows each: a 400 J for 3,000 tokens, b 200 J for 1,000; 600 J = 600 / 3.6e6 kWh, and
per server 133.3 and 200 mJ/token.
"""

from __future__ import annotations

import json
import time

import pytest

from collectors.export.exporter import SpectopExporter
from collectors.ledgerdb.store import EnergyStore
from collectors.meters import MeterInfo, MeterReading
from collectors.servers.snapshot import ServerSnapshot
from tui.cli import main

METER = MeterInfo("dcgm", ("gpu0",), "GPU board", "counter", 0.1)
T0 = time.monotonic() - 60  # a minute ago: inside --since 1h


class SteadySampler:
    """A meter drawing `power_w` steadily from T0 to T0 + `span_s`, read every 0.1 s."""

    reads_on_marks = False  # its readings are given: nothing to read at a poll

    def __init__(self, power_w: float, span_s: int = 10) -> None:
        self.meter = type("Meter", (), {"info": METER})()
        self._readings = [
            MeterReading(T0 + t / 10, power_w * t / 10, power_w) for t in range(span_s * 10 + 1)
        ]

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        return [r for r in self._readings if since_t_s is None or r.t_s > since_t_s]


def feed(exporter: SpectopExporter, index: int, url: str, tokens_per_s: int) -> None:
    for t in range(1, 11):
        snap = ServerSnapshot(
            url=url, backend="test", taken_at_s=T0 + t, status="ok", window_s=1.0, window_tokens=tokens_per_s
        )
        exporter.update(snap, index)


def report(path, capsys) -> dict:
    assert main(["report", "--since", "1h", "--ledger", str(path), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_each_server_on_its_own_meter_is_kept(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    with EnergyStore(path) as store:
        exporter = SpectopExporter(None, SteadySampler(40.0), ledger=store)
        exporter.add_server(None, SteadySampler(20.0))
        feed(exporter, 0, "http://a", 300)
        feed(exporter, 1, "http://b", 100)
        exporter.write_held()  # as `run` does when it stops
    body = report(path, capsys)
    assert body["servers"] == ["http://a", "http://b"]
    assert body["kwh"] == pytest.approx(600 / 3.6e6)
    assert body["tokens"] == 4000
    assert main(["report", "--since", "1h", "--ledger", str(path)]) == 0
    assert "energy         0.0001667 kWh" in capsys.readouterr().out


def test_servers_sharing_a_meter_keep_no_ledger(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    meter = SteadySampler(40.0)
    with EnergyStore(path) as store:
        exporter = SpectopExporter(None, meter, ledger=store)
        exporter.add_server(None, meter)
        feed(exporter, 0, "http://a", 300)
        feed(exporter, 1, "http://b", 100)
        exporter.write_held()
    assert report(path, capsys)["servers"] == []


async def test_windows_are_written_every_ten_seconds_of_polls_and_a_stop_writes_the_rest(tmp_path, capsys):
    """One transaction per poll was a tenth of the exporter's CPU: windows go to disk together, the
    first eleven once the first has been held 10 s of polls, the next eleven 11 polls later; when the
    loop stops (Ctrl-C, SIGTERM), the three still held. 25 windows of 300 tokens on a 40 W meter:
    7,500 tokens, 1,000 J."""
    path = tmp_path / "ledger.sqlite"
    on_disk: list[int] = []  # tokens in the ledger as each poll starts

    with EnergyStore(path) as store:

        class Polled:
            url, backend, polls = "http://a", "test", 0

            async def poll(self) -> ServerSnapshot:
                on_disk.append(sum(row.tokens for row in store.hours(0)))
                self.polls += 1
                return ServerSnapshot(
                    url=self.url,
                    backend="test",
                    taken_at_s=T0 + self.polls,
                    status="ok",
                    window_s=1.0,
                    window_tokens=300,
                )

        collector = Polled()
        exporter = SpectopExporter(collector, SteadySampler(40.0, span_s=30), ledger=store)
        await exporter.run(0.01, lambda: collector.polls >= 25)
    assert on_disk == [0] * 11 + [3300] * 11 + [6600] * 3
    body = report(path, capsys)
    assert body["tokens"] == 7500 and body["kwh"] == pytest.approx(1000 / 3.6e6)
