"""Several servers on one meter: the meter's joules split between them by tokens, and said so.

The expected figures are worked by hand: a steady 300 W over a 10 s window under two servers
generating 30 and 10 tokens a second is 3000 J for 400 tokens, 7.5 J (7500 mJ) per token for
each, their shares 75 % and 25 %; alone on the meter the first would read 10 000 mJ/token.
A third server on its own 100 W meter at 20 tokens a second keeps its 5000 mJ/token.
"""

from __future__ import annotations

import pytest

from collectors.meters import MeterReading
from tests.support import synthetic
from tests.support.dashboard import FakeSampler
from tests.support.snapshots import window_snapshot
from tui.app import SpectopApp
from tui.config import Settings
from tui.fleet import WatchedServer, fleet_energy, summary_rows
from tui.widgets.servers_table import meter_cell


def steady(power_w: float) -> list[MeterReading]:
    """A meter at `power_w` from t = 100 s to 110 s, read every 0.1 s."""
    return [MeterReading(100 + i / 10, power_w * i / 10, power_w) for i in range(101)]


def watched(name: str, sampler: FakeSampler, tokens_per_s: int) -> WatchedServer:
    server = WatchedServer.of(f"http://{name}:8080", None, sampler, 30.0, name=name)  # type: ignore[arg-type]
    for reading in sampler.readings():
        server.state.add_reading(reading)
    for t in range(101, 111):
        server.state.add_snapshot(
            window_snapshot(
                float(t),
                url=server.url,
                window_tokens=tokens_per_s,
                live_tok_s=float(tokens_per_s),
                slots_busy=1,
                slots_total=4,
            )
        )
    return server


def three_servers() -> list[WatchedServer]:
    shared = FakeSampler(synthetic.METER, steady(300.0))
    own = FakeSampler(synthetic.METER, steady(100.0))
    return [watched("a", shared, 30), watched("b", shared, 10), watched("c", own, 20)]


def test_a_shared_meter_is_split_by_tokens_and_labelled():
    servers = three_servers()
    # each ledger alone counts the whole meter: the figures a split must correct
    assert servers[0].state.energy().mj_per_token == pytest.approx(10_000)
    assert servers[1].state.energy().mj_per_token == pytest.approx(30_000)

    a, b, c = fleet_energy(servers)
    assert a.energy.mj_per_token == pytest.approx(7_500)
    assert b.energy.mj_per_token == pytest.approx(7_500)
    assert (a.share, b.share) == (pytest.approx(0.75), pytest.approx(0.25))
    assert (a.meter_users, b.meter_users) == (2, 2)
    assert c.energy.mj_per_token == pytest.approx(5_000) and (c.meter_users, c.share) == (1, 1.0)

    rows = summary_rows(servers)
    assert [meter_cell(row).plain for row in rows] == [
        "shared ×2, 75 % by tokens",
        "shared ×2, 25 % by tokens",
        "own",
    ]
    assert rows[0].energy.energy.mj_per_token == pytest.approx(7_500)
    assert [row.power_w for row in rows] == [300.0, 300.0, 100.0]


def test_a_server_without_a_meter_says_so():
    server = WatchedServer.of("http://x:8080", None, None, 30.0)  # type: ignore[arg-type]
    (energy,) = fleet_energy([server])
    assert (energy.meter_users, energy.share, energy.energy.mj_per_token) == (0, None, None)
    assert server.name == "http://x:8080"


async def test_the_summary_table_says_shared_meter_where_mj_per_token_cannot_compare():
    servers = three_servers()
    app = SpectopApp(Settings(server_url=servers[0].url, poll=False), None, None, fleet=servers)
    async with app.run_test(size=(160, 40)) as pilot:
        app.main.show_servers(app.fleet.rows(), 0)
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        rows = {name: line for line in screen.splitlines() for name in "abc" if f" {name} " in line[:6]}
        # a and b split 3000 J by tokens: 7500 mJ/token each, the same by construction, so neither
        # row shows it; what tells them apart is their 30 and 10 tokens/s and 75 % / 25 % shares
        for name, tok_s, share in (("a", "30.0", "75 %"), ("b", "10.0", "25 %")):
            assert "shared meter" in rows[name] and "7500" not in rows[name]
            assert tok_s in rows[name] and f"shared ×2, {share} by tokens" in rows[name]
        # c alone on 100 W at 20 tokens/s: 1000 J / 200 tokens = 5000 mJ/token, its own figure
        assert "5000" in rows["c"] and "shared" not in rows["c"] and "own" in rows["c"]
