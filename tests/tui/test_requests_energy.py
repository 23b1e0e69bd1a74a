"""The Requests tab's mJ/token cell: a figure once the meter has read past the request, `*` when shared."""

from __future__ import annotations

import dataclasses

from collectors.energy.attribution import Attribution
from collectors.meters import MeterReading
from collectors.servers.snapshot import ServerSnapshot
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of
from tests.support.records import record as make_record
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.requests_table import RequestsTable, _sortable, mj_cell


def test_the_cell_marks_a_shared_figure_and_shows_none_until_covered():
    alone = Attribution(50.0, 50, covered=True, own_concurrency=1, shared=False)
    assert mj_cell(alone) == "1000"
    assert mj_cell(dataclasses.replace(alone, shared=True)) == "1000*"
    assert mj_cell(dataclasses.replace(alone, covered=False, shared=True)) == "—"  # a lower bound
    assert mj_cell(None) == "—"
    assert _sortable("1000*") == (0, 1000.0)  # sorts among the numbers


async def test_a_probe_gets_its_energy_when_the_meter_reads_past_it():
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(140, 42)) as pilot:
        readings = synthetic.readings()  # 99-103 s, 60 W from 101 s
        app.post_message(messages.MeterRead(readings))
        await pilot.pause()
        # a probe that ends at 103.08 s, past the meter's last reading; the server saw two busy
        probe = dataclasses.replace(synthetic.record(t_send_s=102.95), concurrency_max=2)
        app.add_records([probe])
        await pilot.pause()
        table = app.query_one(RequestsTable)
        assert table.get_cell("r1", "mj") == "—"
        later = MeterReading(103.2, readings[-1].energy_j + 60.0 * 0.2, 60.0)
        app.post_message(messages.MeterRead([later]))
        await pilot.pause()
        # 60 W over its 0.128929 s is 7.736 J, over 48 tokens 161 mJ; another request ran beside it
        assert table.get_cell("r1", "mj") == "161*"
        assert "161*" in text_of(table)


async def test_a_probe_beside_traffic_the_server_counted_reads_its_own_share():
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(140, 42)) as pilot:
        # the demo: 16 equally fast slots under 40 W; polls a second apart count 300 tokens
        # a second from the 15 others, 320 while the probe (10-14 s, 80 tokens, 20 a second) runs
        counts = {9.0: 300, 10.0: 300, 11.0: 320, 12.0: 320, 13.0: 320, 14.0: 320, 15.0: 300}
        app.post_message(messages.ServerPolled(ServerSnapshot(synthetic.URL, "llama.cpp", 8.0, "ok")))
        for t_s, tokens in counts.items():
            poll = ServerSnapshot(synthetic.URL, "llama.cpp", t_s, "ok", window_s=1.0, window_tokens=tokens)
            app.post_message(messages.ServerPolled(poll))
        readings = [MeterReading(8.0 + k / 10, 40.0 * k / 10, 40.0) for k in range(81)]  # 8-16 s
        app.post_message(messages.MeterRead(readings))
        await pilot.pause()
        app.add_records([make_record("r1", 10.0, 14.0, 80, concurrency_max=16)])
        await pilot.pause()
        # 40 W × 4 s = 160 J; the probe made 80 of the 1280 tokens: 10 J, 125 mJ/token
        # (charged the whole board it read 160 J / 80 = 2000*)
        table = app.query_one(RequestsTable)
        assert table.get_cell("r1", "mj") == "125"
