"""`spectop sweep`: the paired plain-versus-draft sweep, headless, with a live progress display.

Exit codes: 0 the sweep finished and every batch had a trustworthy pair (or, with `--meter none`,
nothing is missing but the energy it was told not to measure); 3 it finished but some batch (or
every one) had none, so the recommendation leaves it out (or there is none): a dead, stale,
backwards or implausible meter, failed requests, too few slots...; 1 it stopped on an error (a
server died, the disk filled), completed points saved; 2 bad input, nothing measured; 130 Ctrl-C,
and 128 + the signal for SIGTERM (143) and SIGHUP (129), with the summary of the completed points
written in each case.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from dataclasses import replace

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from collectors.errors import SpectopError
from collectors.meters import Sampler, sampling
from collectors.sweep import plan as sweep_plan
from collectors.sweep.arms import make_arms
from collectors.sweep.events import (
    IdleMeasured,
    PointDone,
    PointProgressed,
    PointsAdded,
    SweepEnded,
    SweepStarted,
)
from collectors.sweep.prompts import BUILT_IN, DEFAULT_SET, PromptSet, load_prompts
from collectors.sweep.runner import run_sweep
from collectors.sweep.summary import rewrite_summary
from tui.commands import _common as opts
from tui.commands._sweep_arms import add_more_arm_options, arms_plan, multi_arm
from tui.commands._sweep_finish import finish as _finish
from tui.commands._sweep_lines import point_line as _point_line
from tui.commands._sweep_lines import watts as _w
from tui.commands._sweep_load import add_load_options, with_load

DEFAULT_BATCHES = "1,2,4,8,16"
NAME = "sweep"
HELP = "paired plain-versus-draft sweep over batch sizes"
DESCRIPTION = (
    "For each batch, measure plain, draft and plain again with B concurrent requests at "
    "temperature 0 and a fixed length; energy from the meter over each window."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    opts.add_arm_options(parser, "arms (a running server's URL, or a command spectop starts)")
    add_more_arm_options(parser)
    parser.add_argument("--batches", help=f"concurrent requests per point (default {DEFAULT_BATCHES})")
    parser.add_argument(
        "--tokens",
        type=opts.whole("--tokens", 2, sweep_plan.MAX_TOKENS, 256),
        default=None,
        help="tokens per answer (default 256; quick 96)",
    )
    parser.add_argument(
        "--passes",
        type=opts.whole("--passes", 1, sweep_plan.MAX_PASSES, 2),
        default=None,
        help="passes, the second in reverse order (default 2)",
    )
    parser.add_argument(
        "--prompts",
        default=DEFAULT_SET,
        help=f"built-in set ({', '.join(sorted(BUILT_IN))}) or a file of prompts "
        f'(blank-line separated, or .jsonl with a "prompt" key); default {DEFAULT_SET}. A multi-arm '
        'sweep takes classes: code,prose,edit, or a .jsonl whose lines carry a "class"',
    )
    parser.add_argument("--quick", action="store_true", help="batches 1,2,4,8, 96 tokens, one pass, refined")
    parser.add_argument(
        "--idle",
        type=opts.seconds("--idle", 0.0, sweep_plan.MAX_IDLE_S, 5.0),
        default=None,
        metavar="S",
        help="idle baseline seconds (default 5)",
    )
    parser.add_argument(
        "--fresh-server", action="store_true", help="restart launched servers before every point"
    )
    parser.add_argument(
        "--refine",
        action="store_true",
        help="after the grid, also measure the batch between the two around the crossover",
    )
    parser.add_argument(
        "--route",
        choices=("completion", "chat"),
        default=None,
        help="the server's native completion route or the OpenAI chat route "
        "(default: the server's native one where it has one, else chat)",
    )
    add_load_options(parser)
    opts.add_options(parser, "meter", "results", "api-key", "json")


def build_plan(args: argparse.Namespace, prompts: PromptSet | None = None) -> sweep_plan.SweepPlan:
    plan = sweep_plan.SweepPlan(prompts=prompts or load_prompts(args.prompts))
    if args.quick:
        plan = sweep_plan.quick(plan)
    given = args.batches is not None
    if given or not args.quick:
        plan = replace(plan, batches=sweep_plan.parse_batches(args.batches or DEFAULT_BATCHES))
    changes = {
        k: v
        for k, v in (("max_tokens", args.tokens), ("passes", args.passes), ("idle_s", args.idle))
        if v is not None
    }
    plan = replace(
        plan, **changes, fresh_server=args.fresh_server, route=args.route, refine=args.refine or plan.refine
    )
    return with_load(plan, args, given)


def _run_arms(args: argparse.Namespace) -> int:
    """Plain and named arms over prompt classes (collectors/sweep/runner.py)."""
    plan, arms = arms_plan(args, build_plan)
    out = opts.console() if not args.json else None
    if out and arms[0].derived:
        out.print(f"plain arm derived from the draft command: {arms[0].command}", markup=False)
    with sampling(args.meter) as sampler:
        return _sweep(args, plan, arms, out, sampler)


def run(args: argparse.Namespace) -> int:
    if args.load and not args.tune:
        raise SpectopError("--load is the load --tune verifies the schedule over", "add --tune")
    if args.tune:
        from tui.commands import _sweep_tune

        return _sweep_tune.run(args, build_plan, _sweep)
    if multi_arm(args):
        return _run_arms(args)
    plan = build_plan(args)
    arms = make_arms(args.plain, args.draft, args.plain_cmd, args.draft_cmd)
    out = opts.console() if not args.json else None
    if out and arms[0].derived:
        out.print(f"plain arm derived from the draft command: {arms[0].command}", markup=False)
    with sampling(args.meter) as sampler:
        return _sweep(args, plan, arms, out, sampler)


def _sweep(
    args: argparse.Namespace, plan, arms, out, sampler: Sampler | None, ends: list | None = None
) -> int:
    """Run one sweep, print its summary; the exit code. `ends` gets its SweepEnded (for --tune)."""
    meter_info = sampler.meter.info if sampler else None
    if out:
        out.print(
            f"meter: {meter_info.name} ({meter_info.method}, {meter_info.boundary})"
            if meter_info
            else "meter: none (energy will not be measured)",
            markup=False,
        )
    run_dir = None
    ended: SweepEnded | None = None
    # The first Ctrl-C, SIGTERM or SIGHUP (a closed terminal) asks the engine to stop cleanly: the
    # point in flight is dropped, completed ones are on disk and the summary is written. Raising
    # out of the handler instead would land anywhere, e.g. inside asyncio's or anyio's internals,
    # which then print tracebacks. A second signal interrupts at once.
    said: set[str] = set()  # run-wide flags already printed
    stop = threading.Event()
    signalled: list[int] = []  # SIGTERM or SIGHUP, when one of them asked for the stop

    def on_signal(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        if signum != signal.SIGINT:
            signalled.append(signum)
        if signum == _SIGHUP:
            _detach_from_terminal()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, *_TERMINATING)}
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=out or opts.console(),
            disable=args.json,
        ) as progress:
            task = progress.add_task("starting", total=None)
            for event in run_sweep(
                plan, arms, sampler, args.results, should_stop=stop.is_set, api_key=opts.api_key(args)
            ):
                if isinstance(event, SweepStarted):
                    run_dir = event.run_dir
                    progress.update(task, total=len(event.schedule), description="idle baseline")
                elif isinstance(event, IdleMeasured) and out:
                    progress.console.print(
                        f"idle: {_w(event.power_w)} over {event.duration_s:.1f} s"
                        + (f"\n    ! {event.flag.message}" if event.flag else ""),
                        markup=False,
                    )
                elif isinstance(event, PointProgressed):
                    progress.update(task, description=f"{event.key.label}: {event.state}")
                elif isinstance(event, PointDone):
                    progress.advance(task)
                    if out:
                        progress.console.print(_point_line(event.row, said), markup=False)
                elif isinstance(event, PointsAdded):
                    progress.update(task, total=event.first_index + len(event.keys))
                    if out:
                        progress.console.print(
                            f"refining: B={event.keys[0].batch} lies between the batches "
                            "around the crossover",
                            markup=False,
                        )
                elif isinstance(event, SweepEnded):
                    ended = event
    except KeyboardInterrupt:
        if run_dir is None:
            raise
        points = rewrite_summary(run_dir).points
        print(
            f"spectop: sweep {_stopped_by(signalled)}; {points} completed points saved in {run_dir}",
            file=sys.stderr,
        )
        return 128 + signalled[0] if signalled else 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    assert ended is not None
    if ends is not None:
        ends.append(ended)
    code = _finish(ended, out, args.json, _stopped_by(signalled) if stop.is_set() else None)
    return 128 + signalled[0] if signalled else code


_SIGHUP = getattr(signal, "SIGHUP", None)
_TERMINATING = tuple(s for s in (signal.SIGTERM, _SIGHUP) if s is not None)


def _detach_from_terminal() -> None:
    """Point stdout and stderr at /dev/null: writing to a hung-up terminal fails (EIO), and the
    progress display would turn a clean stop into a traceback. The files are the output now."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
        os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _stopped_by(signalled: list[int]) -> str:
    return f"stopped by {signal.Signals(signalled[0]).name}" if signalled else "interrupted"
