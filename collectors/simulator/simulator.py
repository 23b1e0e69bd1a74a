"""`Simulator`: a plain and a draft llama-server arm and one DCGM-exported accelerator, on loopback."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from collectors.simulator.accelerator import Accelerator, AcceleratorReading
from collectors.simulator.backends import BACKENDS, DialectStats, dialect_server, dialect_stats
from collectors.simulator.dcgm import UPDATE_PERIOD_S, DcgmServer, device_labels
from collectors.simulator.engine import Engine
from collectors.simulator.k0_overhead import K0_OVERHEADS, K0Overhead
from collectors.simulator.llama_http import LlamaServer
from collectors.simulator.llama_log import LlamaLog
from collectors.simulator.loopback import LoopbackServer
from collectors.simulator.profiles import DraftShape, Profile, get_profile
from collectors.simulator.request_log import RequestLog
from collectors.simulator.scheduled_arms import arm_policy
from collectors.simulator.tasks import LiveView


@dataclass(frozen=True, slots=True)
class SimulatorState:
    """Both arms and the chip at one instant (the simulator's own view, for demos and tests)."""

    plain: LiveView
    draft: LiveView
    accelerator: AcceleratorReading


class Simulator:
    """Serve two simulated llama-server arms and a dcgm-exporter page from background threads.

    `profile`: a name from `profiles.PROFILES` ("note25", "classes", "classes:code", ...) or a
    `Profile`. `seed` fixes noise, draft outcomes and the device UUID. `speedup` multiplies
    every token rate *and* every power (idle included), so tests run fast while mJ/token,
    acceptance and every ratio stay those of the profile; W and tok/s read `speedup` times the
    profile's. `ports`: (plain, draft, meter); 0 picks a free port. `noise`: relative standard
    deviation of the per-step jitter on step time and on power. `clock`: the monotonic seconds
    the engines schedule on (a test can pass one it moves by hand). `backend`: the dialect both
    arms speak, "llama-server", "vllm" or "sglang" (`BACKENDS`), over the same engines. `dp`: a
    vLLM's data-parallel size (its slots split over `dp` engines, served by `dp` API servers).
    `per_request_spec`: a vLLM's --per-request-spec-decode-metrics ("none", "summary",
    "detailed"): its streams' usage chunk then carries `metrics.speculative_decoding`.
    `log_dir`: where a llama-server pair writes its logs, `plain.log` and `draft.log`, in a real
    llama-server's format (llama_log.py), for spectop's `--server-log` reader; None: no logs.
    `arms`: more drafting servers on the same chip, by name, each started with its engine's own
    flags: a vLLM's `--speculative-config JSON` (a `num_speculative_tokens_per_batch_size`
    schedule), an SGLang's `--speculative-adaptive [--speculative-adaptive-config FILE]`
    (scheduled_arms.py); e.g. "scheduled" and "k0" (configured, nothing drafted). Each serves on
    `arm_ports[name]` (0 or absent: a free port). `k0_overhead`: what a step drafting nothing with
    speculation configured costs over plain (k0_overhead.py; default: the published vLLM figures).
    """

    def __init__(
        self,
        profile: str | Profile = "note25",
        seed: int = 0,
        speedup: float = 1.0,
        host: str = "127.0.0.1",
        ports: tuple[int, int, int] = (0, 0, 0),
        *,
        total_slots: int = 16,
        n_ctx: int = 4096,
        noise: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
        backend: str = "llama-server",
        dp: int = 1,
        per_request_spec: str = "none",
        log_dir: Path | None = None,
        arms: Mapping[str, Sequence[str]] | None = None,
        arm_ports: Mapping[str, int] | None = None,
        k0_overhead: K0Overhead | str = "vllm",
    ) -> None:
        if speedup <= 0:
            raise ValueError("speedup must be positive")
        if backend not in BACKENDS:
            raise KeyError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
        if dp < 1 or (dp > 1 and (backend != "vllm" or total_slots % dp)):
            raise ValueError("dp > 1 needs backend vllm and total_slots divisible by dp")
        self.backend = backend
        self.profile: Profile = get_profile(profile)
        if backend == "sglang":
            # SGLang's EAGLE (topk 1) proposes every step's full draft; its accept rate and length
            # gauges divide by that width, so a simulated SGLang drafts full width too
            n_max = self.profile.draft.n_max
            full = DraftShape(n_max=n_max, p_min=0.0, length_probs=(0.0,) * n_max + (1.0,))
            self.profile = replace(self.profile, draft=full)
        self.seed = seed
        self.speedup = speedup
        self.host = host
        self._ports = ports
        self.accelerator = Accelerator(
            self.profile,
            speedup=speedup,
            noise=noise,
            seed=seed,
            energy_offset_mj=float(1_000_000_000 + (seed % 1000) * 1_000_003),
            clock=clock,
            k0_overhead=K0_OVERHEADS[k0_overhead] if isinstance(k0_overhead, str) else k0_overhead,
        )
        self.total_slots = total_slots
        self._slots_ctx, self._noise, self._clock = (total_slots, n_ctx), noise, clock
        self._dialect_args = (n_ctx, dp, per_request_spec)
        self._arm_ports = dict(arm_ports or {})
        self._stats: dict[str, DialectStats] = {}
        if backend != "llama-server":
            self._stats = {
                kind: dialect_stats(backend, self.profile, kind, n_ctx, dp, per_request_spec)
                for kind in ("plain", "draft")
            }
        # each arm's finished requests with their raw times: what a test holds the pages against
        self.request_logs = {kind: RequestLog() for kind in ("plain", "draft")}
        # only llama-server logs its requests' drafting (vLLM and SGLang log no per-request lines)
        self.logs: dict[str, LlamaLog] = {}
        if log_dir is not None and backend == "llama-server":
            self.logs = {kind: LlamaLog(log_dir / f"{kind}.log", clock()) for kind in ("plain", "draft")}
        self.plain, self.draft = (
            Engine(
                kind,
                self.profile,
                self.accelerator,
                n_slots=total_slots,
                n_ctx=n_ctx,
                seed=seed,
                noise=noise,
                clock=clock,
                observers=[
                    o
                    for o in (self._stats.get(kind), self.logs.get(kind), self.request_logs[kind])
                    if o is not None
                ],
            )
            for kind in ("plain", "draft")
        )
        self.arms: dict[str, Engine] = {}
        self.arm_flags: dict[str, tuple[str, ...]] = {}
        self.warnings: list[str] = []  # what the more arms' servers warned of at start
        for name, flags in (arms or {}).items():
            self._new_arm(name, flags)
        self._servers: list[LoopbackServer] = []

    def _new_arm(self, name: str, flags: Sequence[str]) -> Engine:
        if name in ("plain", "draft", *self.arms):
            raise ValueError(f"the simulator already has an arm called {name!r}")
        (n_slots, n_ctx), dp = self._slots_ctx, self._dialect_args[1]
        policy = arm_policy(self.backend, flags, self.profile, n_slots // dp, dp)
        self._stats[name] = dialect_stats(self.backend, self.profile, name, *self._dialect_args)
        self.request_logs[name] = RequestLog()
        engine = Engine(
            name,
            self.profile,
            self.accelerator,
            observers=[self._stats[name], self.request_logs[name]],
            policy=policy,
            n_slots=n_slots,
            n_ctx=n_ctx,
            seed=self.seed,
            noise=self._noise,
            clock=self._clock,
        )
        self.arms[name] = engine
        self.arm_flags[name] = tuple(flags)
        self.warnings += [f"{name}: {w}" for w in policy.warnings]
        return engine

    def add_arm(self, name: str, flags: Sequence[str], port: int = 0) -> str:
        """Start one more drafting server on the same chip, with its engine's flags (see `arms`),
        while the simulator runs; its URL. ValueError where its engine would refuse the flags."""
        engine = self._new_arm(name, flags)
        if self._servers:
            server = self._arm_server(port, engine)
            self._servers.append(server)
            engine.start()
            server.start()
        return self.arm_urls[name]

    def start(self) -> Simulator:
        if self._servers:
            return self
        try:
            self._servers = [
                self._arm_server(self._ports[0], self.plain),
                self._arm_server(self._ports[1], self.draft),
                DcgmServer(
                    (self.host, self._ports[2]), self.accelerator, device_labels(self.profile.chip, self.seed)
                ),
                *(self._arm_server(self._arm_ports.get(n, 0), engine) for n, engine in self.arms.items()),
            ]
        except OSError:
            for server in self._servers:
                server.server_close()
            self._servers = []
            raise
        for engine in self.engines:
            engine.start()
        for server in self._servers:
            server.start()
        return self

    def dialect_stats(self, kind: str) -> DialectStats | None:
        """The "plain" or "draft" arm's vLLM or SGLang counters (None on llama-server)."""
        return self._stats.get(kind)

    def _arm_server(self, port: int, engine: Engine) -> LoopbackServer:
        if self.backend == "llama-server":
            return LlamaServer((self.host, port), engine)
        return dialect_server(self.backend, (self.host, port), engine, self._stats[engine.kind])

    @property
    def engines(self) -> list[Engine]:
        """Plain, draft and the more arms."""
        return [self.plain, self.draft, *self.arms.values()]

    def stop(self) -> None:
        for engine in self.engines:
            engine.stop()
        for server in self._servers:
            server.stop()
        self._servers = []
        for log in self.logs.values():
            log.close()

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _url(self, index: int) -> str:
        if not self._servers:
            raise RuntimeError("the simulator is not running; call start() first")
        host, port = self._servers[index].server_address[:2]
        return f"http://{host!s}:{port}" if isinstance(host, str) else f"http://{host.decode()}:{port}"

    @property
    def plain_url(self) -> str:
        return self._url(0)

    @property
    def draft_url(self) -> str:
        return self._url(1)

    @property
    def arm_urls(self) -> dict[str, str]:
        """Each more arm's URL by name."""
        return {name: self._url(3 + i) for i, name in enumerate(self.arms)}

    @property
    def meter_url(self) -> str:
        """Base URL of the dcgm-exporter page; the page itself is at `meter_url + "/metrics"`."""
        return self._url(2)

    @property
    def meter_page_url(self) -> str:
        """The dcgm-exporter page with its update period, as `--meter dcgm=URL` wants it: without
        `?period=` spectop assumes dcgm-exporter's 30 s and flags every window short."""
        return f"{self.meter_url}/metrics?period={UPDATE_PERIOD_S:g}"

    def state(self) -> SimulatorState:
        return SimulatorState(self.plain.live(), self.draft.live(), self.accelerator.read())
