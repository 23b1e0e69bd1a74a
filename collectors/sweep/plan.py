"""What a sweep measures and in which order (collectors/docs/sweep.md, "Protocol").

Pitfalls handled: every knob is bounded, so no typo (a batch of 10⁹, a NaN or negative idle time,
10⁹ passes) starts a sweep that could never finish or would crash midway; the front ends name the
option and its range from the same bounds.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace

from collectors.errors import SpectopError
from collectors.sweep.open_loop import parse_arrivals
from collectors.sweep.prompts import BUILT_IN, DEFAULT_SET, PromptSet

MAX_BATCH = 4096  # concurrent requests in one point: beyond any server's slots
MAX_BATCHES = 64  # points per pass at most: each is three windows
MAX_TOKENS = 1_000_000  # per answer: beyond any context window
MAX_PASSES = 100
MAX_IDLE_S = 3600.0
MAX_RATE_RPS = 10_000.0  # requests per second offered at an open-loop point
MAX_RATE_REQUESTS = 100_000
RATES_FIX = "e.g. --rate 0.5,1,2,4 (requests per second)"
OPEN_LOOP_KEYS = frozenset({"rates", "arrivals", "arrival_seed", "rate_requests"})


@dataclass(frozen=True, slots=True)
class PointKey:
    """One measured window: a batch, an arm, a pass, and for plain whether before or after draft."""

    pass_index: int
    batch: int
    arm: str
    phase: str = ""  # "before" / "after" for plain, "" for draft
    prompt_class: str = ""  # the prompt class of a multi-arm sweep's point; "" in the paired sweep
    rate_rps: float | None = None  # an open-loop point's offered rate (its batch is 0); None: B at once

    @property
    def label(self) -> str:
        phase = f" {self.phase}" if self.phase else ""
        cls = f"{self.prompt_class} " if self.prompt_class else ""
        load = f"B={self.batch}" if self.rate_rps is None else f"rate {self.rate_rps:g}/s"
        return f"{cls}{load} {self.arm}{phase} (pass {self.pass_index + 1})"


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """The protocol's knobs; defaults follow note 25 (collectors/docs/note25.md: 1-16 requests, two passes, plain before and after)."""

    batches: tuple[int, ...] = (1, 2, 4, 8, 16)
    max_tokens: int = 256
    passes: int = 2
    prompts: PromptSet = field(default_factory=lambda: PromptSet(DEFAULT_SET, BUILT_IN[DEFAULT_SET]))
    warmup_tokens: int = 16
    idle_s: float = 5.0
    drift_limit: float = 0.05  # plain before/after may differ this much in mJ/token before it is flagged
    fresh_server: bool = False  # restart a launched server before every point, as the seed did
    route: str | None = None  # None: native /completion on llama-server, chat elsewhere
    temperature: float = 0.0
    refine: bool = False  # after the grid, measure the batch between the two around the crossover
    # open-loop points (open_loop.py): offered rates in requests/s, after the batches; none by default
    rates: tuple[float, ...] = ()
    arrivals: str = "poisson"  # or "bursty:CV"
    arrival_seed: int = 0
    rate_requests: int = 64  # requests per open-loop point, each `max_tokens` long

    def __post_init__(self) -> None:
        if (
            (not self.batches and not self.rates)
            or len(self.batches) > MAX_BATCHES
            or any(not 1 <= b <= MAX_BATCH for b in self.batches)
        ):
            raise SpectopError(
                f"batches must be up to {MAX_BATCHES} whole numbers from 1 to {MAX_BATCH}, not {self.batches}",
                "e.g. --batches 1,2,4,8,16",
            )
        if not 2 <= self.max_tokens <= MAX_TOKENS:
            raise SpectopError(
                f"--tokens must be from 2 to {MAX_TOKENS:,}, not {self.max_tokens}", "e.g. --tokens 256"
            )
        if not 1 <= self.passes <= MAX_PASSES:
            raise SpectopError(
                f"--passes must be from 1 to {MAX_PASSES}, not {self.passes}", "e.g. --passes 2"
            )
        if not (math.isfinite(self.idle_s) and 0 <= self.idle_s <= MAX_IDLE_S):
            raise SpectopError(
                f"--idle must be seconds from 0 to {MAX_IDLE_S:g}, not {self.idle_s}", "e.g. --idle 5"
            )
        _check_rates(self.rates)
        parse_arrivals(self.arrivals)  # a bad name or CV raises here, before anything runs
        if not 1 <= self.rate_requests <= MAX_RATE_REQUESTS:
            raise SpectopError(
                f"--rate-requests must be from 1 to {MAX_RATE_REQUESTS:,}, not {self.rate_requests}",
                "e.g. --rate-requests 64",
            )

    def schedule(self) -> list[PointKey]:
        """Every window in order: passes alternate batch order, then rate order (open-loop points
        after the closed-loop ones); at each batch or rate plain, draft, plain."""
        keys = []
        for p in range(self.passes):
            batches = sorted(self.batches) if p % 2 == 0 else sorted(self.batches, reverse=True)
            for b in batches:
                keys += [
                    PointKey(p, b, "plain", "before"),
                    PointKey(p, b, "draft"),
                    PointKey(p, b, "plain", "after"),
                ]
            for r in sorted(self.rates, reverse=p % 2 == 1):
                keys += [
                    PointKey(p, 0, "plain", "before", rate_rps=r),
                    PointKey(p, 0, "draft", rate_rps=r),
                    PointKey(p, 0, "plain", "after", rate_rps=r),
                ]
        return keys


@dataclass(frozen=True, slots=True)
class ArmsPlan:
    """What a sweep measures: the knobs (`base`), the arms besides plain and the prompt classes.

    The paired sweep (`paired`) is the one with the arm "draft" and one unnamed class, the base's
    prompts: its points carry no class and run in note 25's order (`SweepPlan.schedule`). A multi-arm
    sweep (seed 001, collectors/docs/draft-strategies.md) runs every arm on every class at every
    batch, bracketed by plain; a slow drift of the machine (heat, a background job) must not line
    up with one arm, so the order of (class, batch) blocks and of the arms inside each is shuffled
    anew in every pass, from a seed the run keeps, so a run can be repeated in the same order.
    """

    base: SweepPlan
    arm_names: tuple[str, ...]
    classes: tuple[PromptSet, ...]  # empty: the paired sweep's one unnamed class, `base.prompts`
    seed: int = 0  # of the shuffled order

    def __post_init__(self) -> None:
        if self.classes and self.base.rates:
            raise SpectopError(
                "--rate works in the paired sweep (plain against draft), not with named arms",
                "run the open-loop points as a paired sweep: --plain ... --draft ... --rate R",
            )

    @property
    def is_paired(self) -> bool:
        return not self.classes

    def prompt_set(self, name: str) -> PromptSet:
        return next((c for c in self.classes if c.name == name), self.base.prompts)

    def schedule(self) -> list[PointKey]:
        """Per pass, the (class, batch) blocks in a shuffled order; in each, plain, the arms shuffled, plain."""
        if self.is_paired:
            return self.base.schedule()
        rng = random.Random(self.seed)
        keys: list[PointKey] = []
        for p in range(self.base.passes):
            blocks = [(c.name, b) for c in self.classes for b in self.base.batches]
            rng.shuffle(blocks)
            for cls, batch in blocks:
                arms = list(self.arm_names)
                rng.shuffle(arms)
                keys.append(PointKey(p, batch, "plain", "before", cls))
                keys += [PointKey(p, batch, arm, "", cls) for arm in arms]
                keys.append(PointKey(p, batch, "plain", "after", cls))
        return keys


def paired(plan: SweepPlan) -> ArmsPlan:
    """The paired sweep: plain against the arm "draft" on the plan's prompts."""
    return ArmsPlan(plan, ("draft",), ())


def quick(plan: SweepPlan | None = None) -> SweepPlan:
    """A sweep a person waits for at the keyboard: about a minute on the demo."""
    base = plan or SweepPlan()
    return replace(
        base, batches=(1, 2, 4, 8), max_tokens=96, passes=1, warmup_tokens=8, idle_s=2.0, refine=True
    )


def parse_batches(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError as exc:
        raise SpectopError(
            f"--batches must be comma-separated integers, not {text!r}", "e.g. --batches 1,2,4,8,16"
        ) from exc
    if not values:
        raise SpectopError("--batches is empty", "e.g. --batches 1,2,4,8,16")
    if len(values) > MAX_BATCHES or any(not 1 <= v <= MAX_BATCH for v in values):
        raise SpectopError(
            f"--batches must be up to {MAX_BATCHES} whole numbers from 1 to {MAX_BATCH}, not {text!r}",
            "e.g. --batches 1,2,4,8,16",
        )
    return values


def _check_rates(rates: tuple[float, ...]) -> None:
    if len(rates) > MAX_BATCHES or any(not (math.isfinite(r) and 0 < r <= MAX_RATE_RPS) for r in rates):
        raise SpectopError(
            f"--rate must be up to {MAX_BATCHES} rates above 0 and at most {MAX_RATE_RPS:g} requests/s, "
            f"not {rates}",
            RATES_FIX,
        )


def parse_rates(text: str) -> tuple[float, ...]:
    """`--rate 0.5,1,2`: offered rates in requests per second, each once."""
    try:
        values = tuple(dict.fromkeys(float(v) for v in text.replace(" ", "").split(",") if v))
    except ValueError as exc:
        raise SpectopError(f"--rate must be comma-separated numbers, not {text!r}", RATES_FIX) from exc
    if not values:
        raise SpectopError("--rate is empty", RATES_FIX)
    _check_rates(values)
    return values
