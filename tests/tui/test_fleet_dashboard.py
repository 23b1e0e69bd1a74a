"""One dashboard against two simulated servers, llama-server and vLLM, each on its own meter.

The app polls both for real (AutoCollector) and reads both simulated DCGM pages. Once both have
live figures it is paused, and each summary row is checked against the panels of its server,
picked with the arrow keys and Enter: the same figures, from the same state, read the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from collectors.meters import sampling
from collectors.servers.auto import AutoCollector
from collectors.simulator import Simulator
from collectors.simulator.traffic import TrafficGenerator, default_pattern
from tests.support.dashboard import text_of, wait_until
from tui.app import SpectopApp
from tui.config import Settings
from tui.fleet import WatchedServer
from tui.widgets.servers_table import COLUMNS

pytestmark = pytest.mark.slow  # a dashboard on two simulated servers under traffic

BACKENDS = ("llama-server", "vllm")


@pytest.fixture(scope="module")
def sims() -> Iterator[list[Simulator]]:
    with ExitStack() as stack:
        sims = [stack.enter_context(Simulator(seed=i, speedup=4, backend=b)) for i, b in enumerate(BACKENDS)]
        pattern = default_pattern(phase_s=30, levels=(2,), arms=("draft",))
        for sim in sims:
            traffic = TrafficGenerator(
                {"draft": sim.draft_url}, pattern, n_tokens=96, openai=sim.backend != "llama-server"
            ).start()
            stack.callback(traffic.stop)
        yield sims


def row_text(app: SpectopApp, index: int) -> dict[str, str]:
    cells = app.main.query_one("#servers").get_row(str(index))
    return {key: cell.plain for (key, _), cell in zip(COLUMNS, cells)}


def body(panel) -> str:
    return text_of(panel)


def live(server: WatchedServer) -> bool:
    state = server.state
    drafting = state.drafting()
    return (
        bool(state.power_w)
        and state.energy().mj_per_token is not None
        and drafting is not None
        and (drafting.acceptance is not None)
    )


async def test_summary_rows_read_as_each_servers_panels(sims):
    with ExitStack() as stack:
        fleet = [
            WatchedServer.of(
                sim.draft_url,
                AutoCollector(sim.draft_url),
                stack.enter_context(sampling(f"dcgm={sim.meter_url}/metrics?period=0.1")),
                name=sim.backend,
            )
            for sim in sims
        ]
        app = SpectopApp(Settings(server_url=sims[0].draft_url, interval_s=0.5), None, None, fleet=fleet)
        async with app.run_test(size=(140, 42)) as pilot:
            await wait_until(pilot, lambda: all(live(server) for server in app.fleet.servers), timeout_s=120)
            await pilot.press("p")  # still figures to compare
            await pilot.pause(1.0)
            for index, sim in enumerate(sims):
                if index:
                    await pilot.press("down", "enter")
                    await wait_until(pilot, lambda: app.fleet.selected == 1)
                row, main = row_text(app, index), app.main
                assert row["name"].strip("▶ ") == sim.backend
                assert row["backend"] == app.fleet.servers[index].state.latest.backend
                assert sim.draft_url in text_of(main.source_bar)
                assert f"{row['tok_s']} tok/s" in body(main.throughput_panel)
                assert f"acceptance {row['acceptance']}" in body(main.drafting_panel)
                assert f"{row['power']} W" in body(main.power_panel)
                assert f"{row['gross']} mJ/tok" in body(main.energy_panel)
                assert row["meter"] == "own"
            backends = [row_text(app, i)["backend"] for i in range(2)]
            assert backends == ["llama.cpp", "vllm"]
            # two meters, two servers: the rows are not one server's figures twice
            assert row_text(app, 0)["power"] != row_text(app, 1)["power"] or (
                row_text(app, 0)["tok_s"] != row_text(app, 1)["tok_s"]
            )
