"""tune.svg: the tuning loop's result as a user sees it. The simulated vLLM server started with the
schedule `spectop tune` derived from a demo sweep (the engine's own `--speculative-config`), watched
with `--schedule RUN`: the energy panel says the setting in effect and the joules saved against
always-draft so far; the Sweep tab shows the sweep the schedule came from.

The sweep is the one `spectop demo --backend vllm --tune --speedup 4` ran, committed with its
schedule.json under tests/data/sweeps (its mJ/token do not depend on the speedup), so the capture
takes seconds and the schedule on the screen is the one the test data holds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from collectors.meters import Sampler, sampling
from collectors.servers import registry
from collectors.servers.auto import AutoCollector
from collectors.simulator import Simulator
from collectors.simulator.traffic import TrafficGenerator, default_pattern
from collectors.sweep.request import SavedRun
from collectors.sweep.summary import summarize_saved
from collectors.tune.report import read_schedule
from tui.app import SpectopApp
from tui.commands._demo_tune import with_files
from tui.commands._tune_live import attach
from tui.config import Settings

# the demo's vLLM sweep and the schedule.json `spectop tune RUN --draft-tokens 4` wrote beside it
ROOT = Path(__file__).resolve().parents[1]
TUNED_RUN = ROOT / "tests" / "data" / "sweeps" / "vllm-tune-20261202T045955Z"
# wider than the other captures: the energy panel's verdict then wraps once and the saving fits
SIZE = (160, 42)
LEVELS = (8, 2)  # one level the schedule turns drafting off at, one it drafts at (K 4 to 3 requests)


def tuned_app(run_dir: Path, url: str, sampler: Sampler | None) -> SpectopApp:
    """The dashboard as `spectop --server URL --schedule RUN` opens it."""
    settings = Settings(server_url=url, title="spectop demo: vLLM started with the tuned schedule")
    app = SpectopApp(settings, AutoCollector(url), sampler)
    attach(app.fleet.servers, read_schedule(run_dir)[0])
    return app


async def capture_tuned(out_dir: Path, speedup: float, warm_up_s: float, seed: int) -> Path:
    """Save tune.svg into `out_dir` after `warm_up_s` of traffic at 8 then 2 requests."""
    schedule = read_schedule(TUNED_RUN)[0]
    form = registry.render_schedule("vllm", schedule, None)
    with (
        tempfile.TemporaryDirectory(prefix="spectop-screenshot-") as files,
        Simulator(seed=seed, speedup=speedup, backend="vllm") as sim,
        sampling(f"dcgm={sim.meter_url}/metrics?period=0.1") as sampler,
    ):
        url = sim.add_arm("scheduled", with_files(form.flags, form.files, Path(files)))
        pattern = default_pattern(phase_s=warm_up_s / len(LEVELS), levels=LEVELS, arms=("scheduled",))
        traffic = TrafficGenerator({"scheduled": url}, pattern, n_tokens=96, openai=True).start()
        try:
            app = tuned_app(TUNED_RUN, url, sampler)
            async with app.run_test(size=SIZE) as pilot:
                # shown by its path in the repository: the screen names no folder of the machine it ran on
                app.start_sweep(SavedRun(TUNED_RUN.relative_to(ROOT), summarize_saved(TUNED_RUN)))
                await pilot.pause(warm_up_s)
                app.clear_notifications()
                await pilot.pause(0.2)
                return Path(app.save_screenshot("tune.svg", str(out_dir)))
        finally:
            traffic.stop()
