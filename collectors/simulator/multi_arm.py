"""`MultiArmSimulator`: one simulated llama-server per arm of a multi-arm profile (`note001`), one chip.

Every arm runs on the same simulated accelerator and is read through the same dcgm-exporter page,
as the seed's strategies ran one after another on one machine: a sweep measures one arm at a time,
so each window's joules are that arm's. An arm knows a request's class from its prompt (the
profile's keywords route spectop's built-in code, prose and edit prompts to their classes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from collectors.simulator.accelerator import Accelerator
from collectors.simulator.dcgm import UPDATE_PERIOD_S, DcgmServer, device_labels
from collectors.simulator.engine import Engine
from collectors.simulator.llama_http import LlamaServer
from collectors.simulator.profiles import PROFILES, Profile, get_profile

MULTI_ARM_PROFILES = tuple(name for name, profile in PROFILES.items() if profile.arm_names)


class MultiArmSimulator:
    """Serve `plain` and each named arm of `profile` on loopback, and the chip's dcgm-exporter page.

    `speedup`, `seed`, `noise` and `clock` mean what they mean for `Simulator`; ports are free ones
    unless `base_port` is given (then plain, the arms in order, and the meter last).
    """

    def __init__(
        self,
        profile: str | Profile = "note001",
        seed: int = 0,
        speedup: float = 1.0,
        host: str = "127.0.0.1",
        base_port: int = 0,
        *,
        n_slots: int = 16,
        noise: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speedup <= 0:
            raise ValueError("speedup must be positive")
        self.profile = get_profile(profile)
        if not self.profile.arm_names:
            raise KeyError(f"profile {self.profile.name!r} has no named arms (try note001)")
        self.seed, self.host, self._base_port = seed, host, base_port
        self.accelerator = Accelerator(
            self.profile,
            speedup=speedup,
            noise=noise,
            seed=seed,
            energy_offset_mj=float(1_000_000_000 + (seed % 1000) * 1_000_003),
            clock=clock,
        )
        self.engines = {
            name: Engine(
                name, self.profile, self.accelerator, n_slots=n_slots, seed=seed, noise=noise, clock=clock
            )
            for name in ("plain", *self.profile.arm_names)
        }
        self._servers: list[LlamaServer | DcgmServer] = []

    def _port(self, index: int) -> int:
        return self._base_port + index if self._base_port else 0

    def start(self) -> MultiArmSimulator:
        if self._servers:
            return self
        try:
            for i, engine in enumerate(self.engines.values()):
                self._servers.append(LlamaServer((self.host, self._port(i)), engine))
            labels = device_labels(self.profile.chip, self.seed)
            self._servers.append(
                DcgmServer((self.host, self._port(len(self.engines))), self.accelerator, labels)
            )
        except OSError:
            for server in self._servers:
                server.server_close()
            self._servers = []
            raise
        for engine in self.engines.values():
            engine.start()
        for server in self._servers:
            server.start()
        return self

    def stop(self) -> None:
        for engine in self.engines.values():
            engine.stop()
        for server in self._servers:
            server.stop()
        self._servers = []

    def __enter__(self) -> MultiArmSimulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _url(self, index: int) -> str:
        if not self._servers:
            raise RuntimeError("the simulator is not running; call start() first")
        host, port = self._servers[index].server_address[:2]
        return f"http://{host!s}:{port}" if isinstance(host, str) else f"http://{host.decode()}:{port}"

    @property
    def urls(self) -> dict[str, str]:
        """Each arm's URL by name, plain first."""
        return {name: self._url(i) for i, name in enumerate(self.engines)}

    @property
    def meter_page_url(self) -> str:
        """The dcgm-exporter page with its update period, as `--meter dcgm=URL` wants it."""
        return f"{self._url(len(self.engines))}/metrics?period={UPDATE_PERIOD_S:g}"
