"""The dashboard on the vLLM- and SGLang-speaking demo names the server it found."""

from __future__ import annotations

import pytest

from collectors.servers.auto import AutoCollector
from collectors.simulator import Simulator
from tests.support.dashboard import text_of, wait_until
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.source_bar import SourceBar


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
async def test_the_dashboard_names_the_simulated_backend(backend: str) -> None:
    with Simulator(seed=0, speedup=20, backend=backend) as sim:
        settings = Settings(server_url=sim.draft_url, interval_s=0.2)
        app = SpectopApp(settings, AutoCollector(sim.draft_url), None)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: app.state.latest is not None)
            assert app.state.latest.backend == backend
            bar = text_of(app.query_one(SourceBar))
            assert f"ok {backend} {sim.draft_url}" in bar and "drafting" in bar
