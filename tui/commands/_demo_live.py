"""`spectop demo --no-ui`: the demo's traffic with a line a second instead of the dashboard."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

from collectors.simulator import Simulator
from collectors.simulator.simulator import SimulatorState
from collectors.simulator.traffic import TrafficGenerator, default_pattern


def wait(seconds: float, tick: Any = None) -> None:
    """Sleep until `seconds` pass (0: forever), calling `tick()` once a second."""
    deadline = time.monotonic() + seconds if seconds > 0 else None
    while deadline is None or time.monotonic() < deadline:
        left = 1.0 if deadline is None else min(1.0, max(0.0, deadline - time.monotonic()))
        threading.Event().wait(left)
        if tick is not None:
            tick()


class _LiveLine:
    """One line per second from the simulator's own state (the dashboard will replace it)."""

    def __init__(self, sim: Simulator, traffic: TrafficGenerator) -> None:
        self._sim = sim
        self._traffic = traffic
        self._t0 = time.monotonic()
        self._last: SimulatorState = sim.state()

    def tick(self) -> None:
        now = self._sim.state()
        last, self._last = self._last, now
        dt = max(1e-9, now.accelerator.t_s - last.accelerator.t_s)
        plain = now.plain.committed_tokens - last.plain.committed_tokens
        draft = now.draft.committed_tokens - last.draft.committed_tokens
        energy_mj = now.accelerator.energy_mj - last.accelerator.energy_mj
        drafted = now.draft.drafted_tokens - last.draft.drafted_tokens
        accepted = now.draft.accepted_tokens - last.draft.accepted_tokens
        phase = self._traffic.phase
        target = f"{phase.arm} x{phase.concurrency}" if phase else "idle"
        mj = f"{energy_mj / (plain + draft):5.0f} mJ/token" if plain + draft else "    — mJ/token"
        acc = f"  acceptance {100 * accepted / drafted:3.0f} %" if drafted else ""
        print(
            f"{time.monotonic() - self._t0:6.0f} s  {target:9s}  busy plain {now.plain.busy_slots:2d} "
            f"draft {now.draft.busy_slots:2d}  plain {plain / dt:6.1f} tok/s  draft {draft / dt:6.1f} tok/s  "
            f"{energy_mj / dt / 1000:5.1f} W  {mj}{acc}",
            flush=True,
        )


def live(sim: Simulator, args: argparse.Namespace) -> int:
    """`demo --no-ui`: the traffic, and a line a second from the simulator's own state."""
    print(
        f"spectop demo: {sim.profile.description}; speedup {args.speedup:g}\n"
        f"  plain {sim.plain_url}  draft {sim.draft_url}  meter {sim.meter_page_url}\n"
        "  traffic: 1, 2, 4, 8, 16 requests and back, plain then draft at each level; Ctrl-C stops",
        flush=True,
    )
    pattern = default_pattern(phase_s=args.phase)
    urls = {"plain": sim.plain_url, "draft": sim.draft_url}
    openai = sim.backend != "llama-server"
    with TrafficGenerator(urls, pattern, n_tokens=args.tokens, openai=openai) as traffic:
        line = _LiveLine(sim, traffic)
        wait(args.duration, line.tick)
    print("spectop demo: stopped", file=sys.stderr, flush=True)
    return 0
