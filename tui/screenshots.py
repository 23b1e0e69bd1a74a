"""Regenerate screenshots/ from the demo: the live main screen, a finished quick sweep, and the
summary of a dashboard watching two servers (a simulated llama-server and vLLM, a meter each), and
the tuned vLLM server watched with its schedule (screenshot_tune.py).

Run by `spectop demo --screenshots DIR`: the app runs headless on the simulator with its traffic,
exactly as `spectop demo` shows it, and saves SVGs.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import ExitStack
from pathlib import Path

from collectors.meters import Sampler, sampling
from collectors.servers.auto import AutoCollector
from collectors.simulator import Simulator
from collectors.simulator.traffic import TrafficGenerator, default_pattern
from tui.app import SpectopApp
from tui.config import Settings
from tui.fleet import WatchedServer
from tui.screenshot_tune import capture_tuned

SIZE = (140, 42)


async def _capture(sim: Simulator, out_dir: Path, warm_up_s: float) -> list[Path]:
    with sampling(f"dcgm={sim.meter_url}/metrics?period=0.1") as sampler:
        return await _capture_with(sim, sampler, out_dir, warm_up_s)


async def _capture_with(
    sim: Simulator, sampler: Sampler | None, out_dir: Path, warm_up_s: float
) -> list[Path]:
    pattern = default_pattern(phase_s=warm_up_s / 2, levels=(1, 2), arms=("draft",))
    traffic = TrafficGenerator({"draft": sim.draft_url}, pattern, n_tokens=96).start()
    running = [traffic]

    def on_sweep(sweeping: bool) -> None:
        if sweeping:
            threading.Thread(target=running[0].stop, daemon=True).start()

    settings = Settings(
        server_url=sim.draft_url,
        plain_url=sim.plain_url,
        draft_url=sim.draft_url,
        results_root=Path("results"),
        title="spectop demo",
    )
    app = SpectopApp(settings, AutoCollector(sim.draft_url), sampler, on_sweep=on_sweep)
    saved = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(warm_up_s)
            await pilot.press("r")
            await pilot.pause(4.0)
            app.clear_notifications()
            await pilot.pause(0.2)
            saved.append(Path(app.save_screenshot("main.svg", str(out_dir))))
            await pilot.press("s")
            await pilot.click("#dialog-run")
            while app.main.query_one("#sweep-run").disabled or not app.state.sweep_summary:
                await pilot.pause(0.5)
            await pilot.pause(1.0)
            app.clear_notifications()
            await pilot.pause(0.2)
            saved.append(Path(app.save_screenshot("sweep.svg", str(out_dir))))
    finally:
        running[0].stop()
    return saved


async def _capture_fleet(
    sims: list[Simulator], samplers: list[Sampler | None], out_dir: Path, warm_up_s: float
) -> Path:
    fleet = [
        WatchedServer.of(sim.draft_url, AutoCollector(sim.draft_url), sampler, name=f"gpu{i}-{sim.backend}")
        for i, (sim, sampler) in enumerate(zip(sims, samplers))
    ]
    settings = Settings(server_url=sims[0].draft_url, title="spectop demo: two servers")
    app = SpectopApp(settings, None, None, fleet=fleet)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(warm_up_s)
        app.clear_notifications()
        await pilot.pause(0.2)
        return Path(app.save_screenshot("fleet.svg", str(out_dir)))


def capture_fleet(out_dir: Path, speedup: float = 1.0, warm_up_s: float = 12.0, seed: int = 0) -> Path:
    """Save fleet.svg: a simulated llama-server and vLLM under traffic, each on its own meter."""
    with ExitStack() as stack:
        sims = [
            stack.enter_context(Simulator(seed=seed + i, speedup=speedup, backend=backend))
            for i, backend in enumerate(("llama-server", "vllm"))
        ]
        samplers = [stack.enter_context(sampling(f"dcgm={sim.meter_url}/metrics?period=0.1")) for sim in sims]
        for sim in sims:
            pattern = default_pattern(phase_s=warm_up_s * 4, levels=(2,), arms=("draft",))
            openai = sim.backend != "llama-server"
            traffic = TrafficGenerator({"draft": sim.draft_url}, pattern, n_tokens=96, openai=openai).start()
            stack.callback(traffic.stop)
        return asyncio.run(_capture_fleet(sims, samplers, out_dir, warm_up_s))


def capture(out_dir: Path, speedup: float = 1.0, warm_up_s: float = 12.0, seed: int = 0) -> list[Path]:
    """Save main.svg, sweep.svg, fleet.svg and tune.svg into `out_dir`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with Simulator(seed=seed, speedup=speedup) as sim:
        saved = asyncio.run(_capture(sim, out_dir, warm_up_s))
    tuned = asyncio.run(capture_tuned(out_dir, speedup, warm_up_s, seed))
    return [*saved, capture_fleet(out_dir, speedup, warm_up_s, seed), tuned]
