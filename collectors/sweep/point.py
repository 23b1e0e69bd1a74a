"""A measured sweep point as frozen records with units in their names: one points.jsonl row.

A row is written by `codec.to_json(point)` and read back by `codec.from_json(SweepPoint, row)`
(store.py); its JSON keys and their order are the ones points.jsonl has always had, the window's
and the energy's figures written inline (`flatten`). Pitfalls handled: rows saved by earlier
versions lack fields added since (the meter's window `energy_window_s`, every gap `chunk_gaps_ms`,
`steps_exact`, `energy_covered`, the requests): each takes a default that means what the older row
meant (unknown, or covered as it was then assumed), never a number it did not hold; a paired
sweep's row has no `prompt_class` key at all, a closed-loop point no `load`, and rows saved before
the requests in flight were counted no `in_flight`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.meters.base import MeterInfo

POINT_SCHEMA = "spectop.point/1"


@dataclass(frozen=True, slots=True)
class Flag:
    """A check's finding: a code (checks.EXCLUDING says which keep a point out) and one line."""

    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFigures:
    """One request of a point, as its row keeps it."""

    request_id: str | None = None
    committed_tokens: int | None = None
    draft_n: int | None = None
    draft_n_accepted: int | None = None
    steps: int | None = None
    steps_exact: bool | None = None
    ttft_ms: float | None = None
    tok_s: float | None = None
    finish_reason: str | None = None
    text_sha256: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerIdentity:
    """The arm's server as one poll through its dialect's collector found it."""

    url: str | None = None
    backend: str | None = None
    command: str | None = None
    build: str | None = None
    model: str | None = None
    drafting: bool | None = None
    slots_total: int | None = None
    # the most tokens a step drafts, where the server says (left out of older runs' files)
    draft_tokens: int | None = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True, slots=True, kw_only=True)
class Machine:
    """What the host is (the accelerator comes from the meter)."""

    hostname: str | None = None
    platform: str | None = None
    processor: str | None = None
    cpu_count: int | None = None
    python: str | None = None


@dataclass(frozen=True, slots=True)
class PromptsUsed:
    name: str = field(metadata={"json": "set"})
    digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowFigures:
    """Token, drafting, concurrency and latency figures of a window (measure.window_figures).

    Drafted, accepted and steps are None when neither the requests nor the server counted them."""

    window_s: float
    committed_tokens: int
    drafted: int | None = None
    accepted: int | None = None
    steps: int | None = None
    steps_exact: bool = True  # rows saved before G could be inferred from bursts had exact steps
    drafting_source: str | None = None
    acceptance: float | None = None
    mean_advance: float | None = None
    verified_width: float | None = None
    concurrency_mean: float | None = None
    concurrency_max: int | None = None
    ttft_ms_p50: float | None = None
    chunk_gap_ms_p50: float | None = None
    chunk_gap_ms_p95: float | None = None
    chunk_gap_ms_p99: float | None = None
    chunk_gap_ms_max: float | None = None
    step_gap_ms_p95: float | None = None
    step_gap_ms_p99: float | None = None
    # the server's own counts (llama-server and SGLang count a request when it ends)
    server_tokens: int | None = None
    server_tokens_tolerance: int | None = None
    server_drafted: int | None = None
    server_accepted: int | None = None
    server_steps: int | None = None
    server_drafted_steps: int | None = None
    server_busy_per_decode: float | None = None
    counters_rounded: bool = False
    requests: tuple[RequestFigures, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyFigures:
    """A point's energy (measure.energy_fields). Energy the meter did not cover is a lower bound:
    `energy_j` beside `energy_covered` False, and no W, mJ/token or net figure from it."""

    energy_j: float | None = None
    energy_covered: bool = True  # rows saved before coverage was recorded were taken as covered
    short_window: bool = False
    meter_update_period_s: float | None = None
    idle_w: float | None = None
    net_energy_j: float | None = None
    power_w: float | None = None
    mj_per_token: float | None = None
    net_mj_per_token: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InFlight:
    """Requests in flight over a window, from their send and completion times (open_loop.py):
    the time-average, time-weighted p50 and p90, the most at once, and the seconds at each level."""

    mean: float | None
    p50: int | None
    p90: int | None
    maximum: int | None = field(metadata={"json": "max"})
    seconds: tuple[float, ...] = ()  # seconds[k]: seconds with k requests in flight


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenLoad:
    """An open-loop point's offered load: `requests` sent at `rate_rps` by an arrival process
    (`poisson`, or `bursty:CV`), from a seed."""

    rate_rps: float
    arrivals: str
    seed: int
    requests: int
    # how late the client sent its requests against their schedule (a busy client sends late)
    send_late_ms_p90: float | None = None

    @property
    def label(self) -> str:
        """ "2/s poisson": the load a figure came from."""
        return f"{self.rate_rps:g}/s {self.arrivals}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint:
    """One measured window of one arm at one batch (and prompt class), its figures and its flags."""

    schema: str = POINT_SCHEMA
    index: int | None = None
    pass_index: int | None = field(default=None, metadata={"json": "pass"})
    batch: int
    arm: str
    phase: str = ""  # "before" / "after" for plain, "" for a drafting arm
    started_at: str | None = None  # UTC, ISO 8601
    window: WindowFigures = field(metadata={"flatten": True})
    energy_window_s: float | None = None  # None in older rows: the request window (`window_s`)
    tok_s: float | None = None
    energy: EnergyFigures = field(default_factory=EnergyFigures, metadata={"flatten": True})
    idle_flag: Flag | None = None
    chunk_gaps_ms: tuple[float, ...] | None = None  # every gap; None in rows saved without them
    server: ServerIdentity | None = None
    meter: MeterInfo | None = None
    machine: Machine | None = None
    prompts: PromptsUsed | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    flags: tuple[Flag, ...] = ()
    prompt_class: str | None = field(default=None, metadata={"omit_none": True})  # multi-arm only
    # an open-loop point's offered load (its `batch` is 0); absent on a closed-loop point
    load: OpenLoad | None = field(default=None, metadata={"omit_none": True})
    in_flight: InFlight | None = field(default=None, metadata={"omit_none": True})  # absent in older rows

    @property
    def rate_rps(self) -> float | None:
        """The offered rate of an open-loop point; None for a closed-loop one (B at once)."""
        return self.load.rate_rps if self.load else None

    @property
    def metered_s(self) -> float:
        """The seconds the meter measured over (the request window in rows saved before it was kept)."""
        return self.window.window_s if self.energy_window_s is None else self.energy_window_s

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(f.code for f in self.flags)
