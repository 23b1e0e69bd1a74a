"""Background traffic for the demo: streamed requests whose concurrency walks up and down.

A pattern is a list of phases (arm, concurrency, seconds). The default walks 1, 2, 4, 8, 16 and
back, and at every level runs the plain arm and then the draft arm, so a dashboard watching the
chip sees drafting pay at one or two requests and cost from four on. Worker threads each keep
one request in flight while their index is below the phase's concurrency; when the phase
changes, requests of the old phase are abandoned (the server cancels them) so every phase
starts clean. Plain httpx, one client per worker thread; the first phase starts when every
worker has its client (building one loads the CA bundle, which on a loaded machine takes longer
than a short phase).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

import httpx

DEFAULT_LEVELS: tuple[int, ...] = (1, 2, 4, 8, 16, 8, 4, 2)
DEMO_PROMPTS: tuple[str, ...] = (
    "Explain how the power supply of a laptop chip responds when its load doubles.",
    "Why does a voltage regulator waste more energy at light load than at full load?",
    "Describe what limits the efficiency of a switching power supply.",
)


@dataclass(frozen=True, slots=True)
class Phase:
    """`concurrency` streamed requests at a time to the `arm` URL, for `seconds`."""

    arm: str
    concurrency: int
    seconds: float


def default_pattern(
    phase_s: float = 16.0, levels: Sequence[int] = DEFAULT_LEVELS, arms: Sequence[str] = ("plain", "draft")
) -> tuple[Phase, ...]:
    """Each level for `phase_s` seconds, shared equally by the arms in turn."""
    return tuple(Phase(arm, level, phase_s / len(arms)) for level in levels for arm in arms)


class TrafficGenerator:
    """Drive `pattern` against `urls` (arm name -> base URL) until stopped; loops by default.
    `openai`: send OpenAI `/v1/completions` (vLLM, SGLang) instead of llama-server's `/completion`."""

    def __init__(
        self,
        urls: Mapping[str, str],
        pattern: Sequence[Phase] | None = None,
        *,
        n_tokens: int = 128,
        prompts: Sequence[str] = DEMO_PROMPTS,
        loop: bool = True,
        openai: bool = False,
    ) -> None:
        self._urls = dict(urls)
        self._pattern = tuple(pattern or default_pattern())
        missing = {p.arm for p in self._pattern} - set(self._urls)
        if missing:
            raise ValueError(f"no URL for arm(s) {', '.join(sorted(missing))}")
        self._n_tokens = n_tokens
        self._prompts = tuple(prompts)
        self._loop = loop
        self._openai = openai
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._phase: Phase | None = None
        self._phase_id = 0
        self._threads: list[threading.Thread] = []
        self._workers = max(p.concurrency for p in self._pattern)
        self._ready = threading.Barrier(self._workers + 1)
        self._completed = 0
        self._errors = 0
        self._lock = threading.Lock()

    @property
    def phase(self) -> Phase | None:
        """The phase running now (None before start and after the pattern ends)."""
        return self._phase

    @property
    def completed(self) -> int:
        """Requests that ran to their last token."""
        return self._completed

    @property
    def errors(self) -> int:
        """Requests that failed (not counting the ones a phase change abandoned)."""
        return self._errors

    def start(self) -> TrafficGenerator:
        self._threads = [threading.Thread(target=self._control, name="traffic-control", daemon=True)]
        self._threads += [
            threading.Thread(target=self._work, args=(i,), name=f"traffic-{i}", daemon=True)
            for i in range(self._workers)
        ]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._ready.abort()
        with self._changed:
            self._phase_id += 1
            self._changed.notify_all()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> TrafficGenerator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _all_ready(self) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):  # stopped before every worker was
            self._ready.wait()

    def _control(self) -> None:
        self._all_ready()
        phases = itertools.cycle(self._pattern) if self._loop else iter(self._pattern)
        for phase in phases:
            with self._changed:
                self._phase = phase
                self._phase_id += 1
                self._changed.notify_all()
            if self._stop.wait(phase.seconds):
                break
        with self._changed:
            self._phase = None
            self._phase_id += 1
            self._changed.notify_all()

    def _work(self, index: int) -> None:
        prompts = itertools.cycle(self._prompts[index % len(self._prompts) :] + self._prompts)
        with httpx.Client(timeout=httpx.Timeout(10.0, read=300.0)) as client:
            self._all_ready()
            while not self._stop.is_set():
                with self._changed:
                    phase, phase_id = self._phase, self._phase_id
                    if phase is None or index >= phase.concurrency:
                        self._changed.wait(timeout=0.5)
                        continue
                self._request(client, self._urls[phase.arm], next(prompts), phase_id)

    def _request(self, client: httpx.Client, url: str, prompt: str, phase_id: int) -> None:
        body: dict[str, object] = {
            "prompt": prompt,
            "n_predict": self._n_tokens,
            "temperature": 0,
            "stream": True,
        }
        path, last = "/completion", '"stop":true'
        if self._openai:
            body = {"prompt": prompt, "max_tokens": self._n_tokens, "temperature": 0, "stream": True}
            path, last = "/v1/completions", "data: [DONE]"
        try:
            with client.stream("POST", url + path, json=body) as response:
                for line in response.iter_lines():
                    if self._phase_id != phase_id:
                        return  # the phase changed: abandon this request
                    if last in line:
                        with self._lock:
                            self._completed += 1
        except httpx.HTTPError:
            with self._lock:
                self._errors += 1
            self._stop.wait(0.5)
