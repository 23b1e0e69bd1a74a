"""`spectop demo`: the simulator, with traffic moving through low and high concurrency.

Without options it opens the dashboard on the draft arm, with traffic walking 1 -> 16 concurrent
requests and back, and the sweep's arms prefilled (traffic pauses while a sweep runs).
`--serve-only` prints the plain, draft and meter URLs (one per line: name, space, URL; the meter's
with the `?period=` to give `--meter dcgm=` so windows are not all flagged short) and serves until
Ctrl-C; with a multi-arm profile (`--profile note001`) one line per arm (plain, draft-2, ...,
ngram) and the meter's. `--no-ui` prints a live line per second instead of opening the dashboard.
`--backend vllm` or `sglang` serves the same calibrated engines as a vLLM or SGLang pair instead
of llama-server; there `--k0` and `--arm scheduled=FLAGS` serve more arms (_demo_arms.py), and
`--tune` runs sweep -> schedule -> verify headless (_demo_tune.py).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

from collectors.errors import SpectopError
from collectors.simulator import PROFILES, Simulator
from collectors.simulator.backends import BACKENDS
from collectors.simulator.multi_arm import MULTI_ARM_PROFILES, MultiArmSimulator
from collectors.simulator.traffic import TrafficGenerator, default_pattern
from collectors.sweep.plan import MAX_TOKENS
from tui.commands import _common as opts
from tui.commands import _demo_arms as demo_arms
from tui.commands._demo_dashboard import dashboard_with_traffic
from tui.commands._demo_live import live, wait
from tui.config import Settings

NAME = "demo"
HELP = "run spectop on a simulated llama-server pair and GPU meter (needs nothing installed)"
DESCRIPTION = __doc__.split("\n\n")[0] if __doc__ else None


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-ui", action="store_true", help="print a live line per second instead of opening the dashboard"
    )
    parser.add_argument(
        "--llama",
        action="store_true",
        help="run the demo on two real llama-servers with generated tiny models "
        "(needs llama-server; estimate meter unless --meter)",
    )
    # not the shared --meter: it serves only --llama, whose tiny CPU models call for the estimate
    parser.add_argument(
        "--meter", default="estimate", metavar="SPEC", help="meter for --llama (default estimate)"
    )
    parser.add_argument(
        "--screenshots",
        type=Path,
        default=None,
        metavar="DIR",
        help="save main.svg and sweep.svg of the demo into DIR, then exit",
    )
    parser.add_argument(
        "--serve-only",
        action="store_true",
        help="print the plain, draft and meter URLs and serve until Ctrl-C (no traffic)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="llama-server",
        help="the server both simulated arms speak (default llama-server)",
    )
    parser.add_argument(
        "--dp",
        type=int,
        choices=(1, 2, 4, 8),
        default=1,
        help="with --backend vllm: data-parallel engines per arm, each with its API server (default 1)",
    )
    parser.add_argument(
        "--port",
        type=opts.whole("--port", 0, 65533, 9000),
        default=0,
        metavar="P",
        help="plain arm on P, draft on P+1, meter on P+2 (default 0: free ports; below 1024 only "
        "with --privileged-port)",
    )
    parser.add_argument(
        "--privileged-port",
        action="store_true",
        help="let --port be below 1024 (as root the demo would take a real service's port)",
    )
    parser.add_argument(
        "--seed",
        type=opts.whole("--seed", 0, 2**32 - 1, 0),
        default=0,
        metavar="S",
        help="noise and draft seed (default 0)",
    )
    parser.add_argument(
        "--speedup",
        type=opts.seconds("--speedup", 0.0, 1000.0, 10.0, above_low=True, unit="a factor"),
        default=1.0,
        metavar="X",
        help="multiply every token rate and every watt by X; mJ/token and acceptance "
        "stay the profile's (default 1)",
    )
    parser.add_argument(
        "--profile",
        default="note25",
        metavar="NAME",
        help=f"calibration profile: {', '.join(PROFILES)}, or classes:code|prose|edit (default note25)",
    )
    parser.add_argument(
        "--phase",
        type=opts.seconds("--phase", 0.0, opts.MAX_SECONDS, 16.0, above_low=True),
        default=16.0,
        metavar="S",
        help="seconds per concurrency level (default 16)",
    )
    parser.add_argument(
        "--tokens",
        type=opts.whole("--tokens", 1, MAX_TOKENS, 128),
        default=128,
        metavar="N",
        help="tokens per demo request (default 128)",
    )
    demo_arms.add_options(parser)
    opts.add_options(parser, "record")
    parser.add_argument(
        "--duration",
        type=opts.seconds("--duration", 0.0, 365 * opts.MAX_SECONDS, 60.0),
        default=0.0,
        metavar="S",
        help="stop after S seconds (default 0: run until Ctrl-C)",
    )


PRIVILEGED_BELOW = 1024  # ports a system service owns; the demo takes them only when asked


def _ports(base: int) -> tuple[int, int, int]:
    return (0, 0, 0) if base == 0 else (base, base + 1, base + 2)


def _start(args: argparse.Namespace, log_dir: Path | None = None) -> Simulator:
    if args.speedup <= 0 or args.phase <= 0 or args.tokens <= 0 or not 0 <= args.port <= 65533:
        raise SpectopError(
            "demo: --speedup, --phase and --tokens must be positive, --port 0-65533",
            "e.g. spectop demo --port 9000",
        )
    try:
        return Simulator(
            args.profile,
            seed=args.seed,
            speedup=args.speedup,
            ports=_ports(args.port),
            backend=args.backend,
            dp=getattr(args, "dp", 1),
            log_dir=log_dir,
            k0_overhead=getattr(args, "k0_overhead", "vllm"),
        ).start()
    except ValueError as exc:
        raise SpectopError(f"demo: --dp {args.dp}: {exc}", "use --dp with --backend vllm") from None
    except KeyError as exc:
        raise SpectopError(f"demo: {exc.args[0]}", "see spectop demo --help for the profiles") from None
    except OSError as exc:
        raise SpectopError(
            f"demo: cannot listen on ports {args.port}-{args.port + 2} ({exc.strerror})",
            "pick another --port, or 0 for free ports",
        ) from None


def _signals_as_interrupt() -> None:
    """Ctrl-C and SIGTERM stop the demo cleanly, even when started where SIGINT was ignored."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)


def run(args: argparse.Namespace) -> int:
    if 0 < args.port < PRIVILEGED_BELOW and not args.privileged_port:
        raise SpectopError(
            f"demo: --port {args.port} is a privileged port (below {PRIVILEGED_BELOW}): the demo would take "
            f"{args.port}-{args.port + 2} from the services that belong there",
            "pick e.g. --port 9000, or add --privileged-port to mean it",
        )
    if args.record is not None and (args.screenshots or args.llama or args.serve_only or args.no_ui):
        raise SpectopError(
            "demo: --record records the demo's dashboard",
            "drop --screenshots, --llama, --serve-only and --no-ui",
        )
    demo_arms.check(args)
    if args.screenshots is not None:
        from tui.screenshots import capture

        for path in capture(args.screenshots, seed=args.seed):
            print(path)
        return 0
    if args.llama:
        from tui.demo_llama import run_llama_demo

        return run_llama_demo(args.meter, args.phase, args.tokens)
    _signals_as_interrupt()
    if args.tune:
        from tui.commands._demo_tune import run_demo_tune

        return run_demo_tune(args, _start(args))
    if args.serve_only and args.profile in MULTI_ARM_PROFILES:
        return _serve_arms(args)
    # the dashboard follows the draft arm's log as `watch` follows a real server's
    logs = None if args.serve_only or args.no_ui else tempfile.TemporaryDirectory(prefix="spectop-demo-")
    sim = _start(args, Path(logs.name) if logs else None)
    try:
        if args.serve_only:
            return _serve_only(sim, args)
        if args.no_ui:
            return live(sim, args)
        return _dashboard(sim, args)
    except KeyboardInterrupt:
        print("spectop demo: stopped", file=sys.stderr, flush=True)
        return 0
    finally:
        sim.stop()
        if logs is not None:
            logs.cleanup()


def _serve_only(sim: Simulator, args: argparse.Namespace) -> int:
    arm_files = demo_arms.start_arms(sim, args)  # noqa: F841 - kept until the demo stops
    print(f"plain {sim.plain_url}\ndraft {sim.draft_url}\nmeter {sim.meter_page_url}", flush=True)
    print("".join(f"{name} {url}\n" for name, url in sim.arm_urls.items()), end="", flush=True)
    print(
        f"spectop demo: simulating {sim.profile.description} as {sim.backend} (seed {args.seed}, speedup {args.speedup:g}); "
        "Ctrl-C stops it\n"
        f"  try: spectop snapshot --server {sim.draft_url}\n"
        f"       spectop sweep --plain {sim.plain_url} --draft {sim.draft_url} "
        f"--meter 'dcgm={sim.meter_page_url}'" + demo_arms.sweep_hint(sim),
        file=sys.stderr,
        flush=True,
    )
    wait(args.duration)
    print("spectop demo: stopped", file=sys.stderr, flush=True)
    return 0


def _serve_arms(args: argparse.Namespace) -> int:
    """`--serve-only` for a multi-arm profile: `NAME URL` per arm, then the meter's line."""
    _start(args).stop()  # the same checks of the options, and of the first ports
    sim = MultiArmSimulator(args.profile, seed=args.seed, speedup=args.speedup, base_port=args.port)
    try:
        sim.start()
        print("\n".join(f"{name} {url}" for name, url in sim.urls.items()), flush=True)
        print(f"meter {sim.meter_page_url}", flush=True)
        arms = " ".join(f"--arm {name}={url}" for name, url in sim.urls.items() if name != "plain")
        print(
            f"spectop demo: simulating {sim.profile.description} (seed {args.seed}); Ctrl-C stops it\n"
            f"  try: spectop sweep --plain {sim.urls['plain']} {arms} --prompts code,prose,edit "
            f"--batches 1 --meter 'dcgm={sim.meter_page_url}'",
            file=sys.stderr,
            flush=True,
        )
        wait(args.duration)
    except OSError as exc:
        raise SpectopError(f"demo: cannot listen ({exc.strerror})", "pick another --port, or 0") from None
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
    print("spectop demo: stopped", file=sys.stderr, flush=True)
    return 0


def _dashboard(sim: Simulator, args: argparse.Namespace) -> int:
    """The dashboard on the draft arm and its log; the traffic starts once idle is measured and
    stops while a sweep measures."""

    def traffic() -> TrafficGenerator:
        pattern = default_pattern(phase_s=args.phase, arms=("draft",))
        openai = sim.backend != "llama-server"
        return TrafficGenerator(
            {"draft": sim.draft_url}, pattern, n_tokens=args.tokens, openai=openai
        ).start()

    settings = Settings(
        server_url=sim.draft_url,
        plain_url=sim.plain_url,
        draft_url=sim.draft_url,
        title="spectop demo",
        server_log=str(sim.logs["draft"].path) if "draft" in sim.logs else None,
    )
    return dashboard_with_traffic(settings, f"dcgm={sim.meter_page_url}", traffic, record=args.record)
