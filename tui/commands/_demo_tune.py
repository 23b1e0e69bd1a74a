"""`spectop demo --backend vllm|sglang --tune`: the whole tuning loop on the simulated chip, headless.

A paired sweep of the simulated plain and draft servers, the schedule derived from it, a scheduled
server and a configured-K = 0 server started on the same chip with the engine's own flags, and the
verification sweep, ending with the one line `spectop sweep --tune` ends with (_sweep_tune.py).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from pathlib import Path

from collectors.errors import SpectopError
from collectors.meters import sampling
from collectors.servers import registry
from collectors.simulator import Simulator
from collectors.simulator.scheduled_arms import k0_flags
from collectors.sweep.arms import ArmSpec
from collectors.sweep.plan import SweepPlan
from collectors.sweep.prompts import DEFAULT_SET, load_prompts
from collectors.tune.schedule import DraftSchedule
from tui.commands import _common as opts
from tui.commands._sweep_tune import WALK, tune_and_verify
from tui.commands.sweep import _sweep

TUNE_BATCHES = (1, 2, 4, 8, 16)  # the demo's walk visits these
TUNE_TOKENS = 256


def run_demo_tune(args: argparse.Namespace, sim: Simulator) -> int:
    """The loop on the running simulator `sim`, stopped after it; the exit code (3: not verified)."""
    try:
        return _run(args, sim)
    finally:
        sim.stop()


def with_files(flags: tuple[str, ...], files: Mapping[str, str], directory: Path) -> list[str]:
    """The form's flags with each file it names written into `directory` and named by its path there."""
    for name, text in files.items():
        (directory / name).write_text(text)
    return [str(directory / flag) if flag in files else flag for flag in flags]


def _run(args: argparse.Namespace, sim: Simulator) -> int:
    if sim.backend not in ("vllm", "sglang"):
        raise SpectopError(
            "demo --tune: llama-server has no setting that drafts by batch",
            "use --backend vllm or sglang; on llama-server, route requests by batch with the proxy",
        )
    # the sweep's own answer length at least: shorter windows are too few meter periods long
    tokens = max(args.tokens, TUNE_TOKENS)
    plan = SweepPlan(
        prompts=load_prompts(DEFAULT_SET), batches=TUNE_BATCHES, passes=1, max_tokens=tokens, idle_s=2.0
    )
    pair = (ArmSpec("plain", sim.plain_url), ArmSpec("draft", sim.draft_url))
    sweep_args = argparse.Namespace(json=False, results=args.results, api_key=None)
    n_max, slots = sim.profile.draft.n_max, sim.total_slots
    with tempfile.TemporaryDirectory(prefix="spectop-demo-tune-") as files:

        def start_arms(schedule: DraftSchedule) -> tuple[ArmSpec, ...]:
            # the engine's own form, as `spectop tune` prints it for the user to paste
            form = registry.render_schedule(sim.backend, schedule, None)
            if form.refused:
                raise SpectopError(f"demo --tune: {form.refused}", "see spectop tune RESULTS")
            scheduled = sim.add_arm("scheduled", with_files(form.flags, form.files, Path(files)))
            k0 = sim.add_arm("k0", k0_flags(sim.backend, n_max, slots, Path(files)))
            return (ArmSpec("scheduled", scheduled), ArmSpec("k0", k0))

        opts.console().print(f"load: {WALK}", markup=False)
        with sampling(f"dcgm={sim.meter_page_url}") as sampler:
            console = opts.console()
            return tune_and_verify(
                sweep_args, plan, pair, console, sampler, start_arms, _sweep, draft_tokens=n_max
            )
