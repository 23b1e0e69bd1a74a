"""`spectop demo`'s scheduled and K = 0 arms: more simulated servers on the same chip, started
with their engine's own flags, as `spectop sweep --arm NAME=URL` measures them.

`--arm NAME=FLAGS` (repeatable): e.g. `--arm 'scheduled=--speculative-config {"num_speculative_tokens":
4, "num_speculative_tokens_per_batch_size": [[1, 3, 4], [4, 256, 0]]}'` on `--backend vllm`, or
`--arm 'scheduled=--speculative-adaptive --speculative-adaptive-config FILE'` on `--backend sglang`.
`--k0`: an arm `k0` with speculation configured and nothing drafted. `--k0-overhead`: what such a
step costs over plain (default the published vLLM figures; `step-2.5x` another backend's).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

from collectors.errors import SpectopError
from collectors.simulator import Simulator
from collectors.simulator.k0_overhead import K0_OVERHEADS
from collectors.simulator.scheduled_arms import k0_flags
from tui.commands._common import add_results_option


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scheduled arms (--backend vllm or sglang; with --serve-only)")
    group.add_argument(
        "--arm",
        action="append",
        default=[],
        metavar="NAME=FLAGS",
        help="one more simulated server on the same chip, started with its engine's flags, e.g. "
        "scheduled='--speculative-config JSON' (vLLM) or "
        "scheduled='--speculative-adaptive --speculative-adaptive-config FILE' (SGLang)",
    )
    group.add_argument(
        "--k0", action="store_true", help="one more arm, k0: speculation configured, nothing drafted"
    )
    group.add_argument(
        "--tune",
        action="store_true",
        help="headless: sweep plain and draft, derive the schedule, start it (and k0) on the same chip "
        "and verify it over the demo's walking load; ends with the verdict line",
    )
    add_results_option(group, help="--tune's run folders (default ./results)")
    group.add_argument(
        "--k0-overhead",
        choices=tuple(K0_OVERHEADS),
        default="vllm",
        help="what a step drafting nothing with speculation configured costs over plain "
        "(default vllm: the published +6.6 %% at 2 to +21.6 %% at 189 requests)",
    )


def arm_flags(
    args: argparse.Namespace, backend: str, n_max: int, n_slots: int, directory: Path
) -> dict[str, list[str]]:
    """Each more arm's flags by name, from `--arm` and `--k0`."""
    arms: dict[str, list[str]] = {}
    for text in args.arm:
        name, eq, flags = text.partition("=")
        if not eq or not name.strip() or name.strip() in ("plain", "draft", *arms):
            raise SpectopError(
                f"demo: --arm {text!r} is not NAME=FLAGS with a new name",
                "e.g. --arm 'scheduled=--speculative-config {...}'",
            )
        arms[name.strip()] = shlex.split(flags)
    if args.k0:
        try:
            arms["k0"] = k0_flags(backend, n_max, n_slots, directory)
        except ValueError as exc:
            raise SpectopError(f"demo: --k0: {exc}", "use --backend vllm or sglang") from None
    return arms


def start_arms(sim: Simulator, args: argparse.Namespace) -> tempfile.TemporaryDirectory[str]:
    """Start the more arms on the running simulator (ports after the meter's with `--port`); a
    refused flag is the engine's own message, and what the engines warned of goes to stderr. The
    folder returned holds the config files the arms read: keep it while they serve."""
    files = tempfile.TemporaryDirectory(prefix="spectop-demo-arms-")
    n_max = sim.profile.draft.n_max
    arms = arm_flags(args, sim.backend, n_max, sim.total_slots, Path(files.name))
    for i, (name, flags) in enumerate(arms.items()):
        try:
            sim.add_arm(name, flags, port=args.port + 3 + i if args.port else 0)
        except ValueError as exc:
            raise SpectopError(
                f"demo: arm {name}: {exc}", "see spectop demo --help for the arms' flags"
            ) from None
        except OSError as exc:
            raise SpectopError(
                f"demo: cannot listen for arm {name} ({exc.strerror})", "pick another --port"
            ) from None
    for warning in sim.warnings:
        print(f"spectop demo: warning: {warning}", file=sys.stderr, flush=True)
    return files


def check(args: argparse.Namespace) -> None:
    """More arms are served with --serve-only (the dashboard watches the draft arm alone)."""
    if (args.arm or args.k0) and not args.serve_only:
        raise SpectopError("demo: --arm and --k0 serve more arms with --serve-only", "add --serve-only")


def sweep_hint(sim: Simulator) -> str:
    """With more arms, the sweep that measures them all (empty without)."""
    if not sim.arms:
        return ""
    arms = " ".join(f"--arm {name}={url}" for name, url in {"draft": sim.draft_url, **sim.arm_urls}.items())
    return f"\n       spectop sweep --plain {sim.plain_url} {arms} --meter 'dcgm={sim.meter_page_url}'"
