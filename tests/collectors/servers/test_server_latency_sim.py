"""The server's own latency percentiles, read from simulated vLLM and SGLang pages, against the
simulator's log of what its engine did (held out: `Simulator.request_logs`, raw times, never the
page spectop parses).

Two truths for each quantile. First, the exact order statistic of the raw values, with the bucket
it falls in as the allowed error: Prometheus's histogram_quantile interpolates linearly inside the
bucket that holds the rank-q·N observation, so no reader of the page can be closer than that.
Second, exact: the test buckets the raw values itself and interpolates as promql's BucketQuantile
does (written out below), which the figure must equal. The bounds are copied from the servers'
sources (vLLM 0.11.0 `v1/metrics/loggers.py:375-445`, SGLang 0.5.23
`srt/observability/metrics_collector.py:841-882, 1965-2037`), not from the simulator.
Each raw value follows the server's definition: TTFT = first token − arrival; queue = first
schedule − arrival; e2e = last token − arrival; TPOT = (last − first token) / (tokens − 1);
inter-token: vLLM one gap per engine step, SGLang the step's gap divided by its tokens, once per
token.
"""

from __future__ import annotations

import asyncio
import bisect
import math
from collections.abc import Iterator

import httpx
import pytest

from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.latency import ServerLatency, window_latency
from collectors.servers.registry import detect, open_collector
from collectors.simulator import Simulator
from collectors.simulator.request_log import LoggedRequest

pytestmark = pytest.mark.slow

INF = math.inf
VLLM_BOUNDS = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
    + (20.0, 40.0, 80.0, 160.0, 640.0, 2560.0, INF),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
    + (20.0, 40.0, 80.0, INF),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0)
    + (240.0, 480.0, 960.0, 1920.0, 7680.0, INF),
}
VLLM_BOUNDS["tpot"] = VLLM_BOUNDS["itl"]
VLLM_BOUNDS["queue"] = VLLM_BOUNDS["e2e"]
SGLANG_BOUNDS = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, INF),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080)
    + (0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0, INF),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
    + (600, 1200, 1800, 2400, INF),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60)
    + (70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000)
    + (2500, 3000, INF),
}
SGLANG_BOUNDS["tpot"] = SGLANG_BOUNDS["itl"]
PROMPTS = ("Write a haiku about GPUs.", "Explain speculative decoding in two lines.", "def add(a, b):")


@pytest.fixture(scope="module", params=["vllm", "sglang"])
def sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    with Simulator(seed=3, speedup=8, backend=request.param) as simulator:
        yield simulator


async def _window(url: str) -> ServerLatency:
    """Poll, run three waves of streamed requests (the same prompts again: prefix-cache hits), poll."""
    async with httpx.AsyncClient(timeout=60) as client:
        backend = await detect(url, client)
        collector = open_collector(url, backend, client=client)
        # traffic before the window: its observations stay in the lifetime buckets, not in the window
        warmup = RequestSpec(prompt="warm-up", max_tokens=300, route="chat", dialect=backend)
        await asyncio.gather(*(stream_request(client, url, warmup) for _ in range(4)))
        first = await collector.poll()
        for wave, tokens in enumerate((40, 90, 160)):
            specs = [RequestSpec(prompt=p, max_tokens=tokens + 7 * i + wave, route="chat", dialect=backend)
                     for i, p in enumerate(PROMPTS * 2)]  # fmt: skip
            await asyncio.gather(*(stream_request(client, url, s) for s in specs))
        last = await collector.poll()
        await collector.aclose()
    assert first.latency_counters is not None and last.latency_counters is not None
    return window_latency(first.latency_counters, last.latency_counters, last.taken_at_s - first.taken_at_s)


def _values(backend: str, log: list[LoggedRequest]) -> dict[str, list[float]]:
    done = [r for r in log if r.t_first is not None]
    values: dict[str, list[float]] = {
        "ttft": [(r.t_first or 0.0) - r.t_submit for r in done],
        "queue": [r.t_start - r.t_submit for r in done],
        "e2e": [r.t_end - r.t_submit for r in done],
        "tpot": [(r.t_end - (r.t_first or 0.0)) / (r.n_decoded - 1) for r in done if r.n_decoded > 1],
    }
    if backend == "vllm":
        values["itl"] = [gap for r in done for gap, _ in r.gaps]
    else:
        values["itl"] = [gap / n for r in done for gap, n in r.gaps for _ in range(n)]
    return values


def _histogram_quantile(q: float, bounds: tuple[float, ...], values: list[float]) -> float:
    """The quantile a Prometheus server would compute from these raw values bucketed by `bounds`
    (each value in every bucket whose bound is ≥ it), written out from promql's BucketQuantile."""
    counts = [sum(1 for v in values if v <= b) for b in bounds]
    rank = q * len(values)
    b = next(i for i, c in enumerate(counts) if c >= rank)
    if b == len(bounds) - 1:
        return bounds[-2]
    if b == 0 and bounds[0] <= 0:
        return bounds[0]
    below = counts[b - 1] if b else 0
    low = bounds[b - 1] if b else 0.0
    return low + (bounds[b] - low) * (rank - below) / (counts[b] - below)


def _bucket(bounds: tuple[float, ...], value: float) -> tuple[float, float]:
    """The (lower, upper] bucket of `bounds` holding `value` (the first bucket's lower bound is 0)."""
    i = bisect.bisect_left(bounds, value)
    return (bounds[i - 1] if i else 0.0), bounds[i]


def test_server_percentiles_equal_the_simulators_own(sim: Simulator) -> None:
    latency = asyncio.run(_window(sim.draft_url))
    logged = sim.request_logs["draft"].finished()[-3 * 2 * len(PROMPTS) :]  # the window's, not the warm-up's
    assert all(r.n_decoded < 300 for r in logged)
    bounds = VLLM_BOUNDS if sim.backend == "vllm" else SGLANG_BOUNDS
    for kind, raw in _values(sim.backend, logged).items():
        tail = latency.tail(kind)
        assert tail is not None, kind
        assert tail.observations == len(raw), kind  # window deltas: only this window's requests
        ordered = sorted(raw)
        for q, shown_ms in ((0.5, tail.p50_ms), (0.95, tail.p95_ms), (0.99, tail.p99_ms)):
            exact = ordered[math.ceil(q * len(ordered)) - 1]  # the rank-q·N observation
            low, high = _bucket(bounds[kind], exact)
            assert shown_ms is not None
            assert low * 1000 - 1e-6 <= shown_ms <= high * 1000 + 1e-6, (kind, q, exact, shown_ms)
            # and exactly what Prometheus makes of the raw values in the server's own buckets
            assert shown_ms == pytest.approx(1000 * _histogram_quantile(q, bounds[kind], raw), abs=1e-6)
        assert tail.mean_ms == pytest.approx(1000 * sum(raw) / len(raw), rel=1e-6), kind
    # the second and third waves repeat the first's prompts: the share of prompt tokens cached
    cached, prompt = sum(r.n_cached for r in logged), sum(r.n_prompt for r in logged)
    assert cached > 0
    assert latency.cache_hit_ratio == pytest.approx(cached / prompt)
    if sim.backend == "vllm":  # every request ran to its max_tokens: "length"
        assert latency.finished == (("length", len(logged)),)
    else:  # SGLang's page says only how many finished and how many were aborted
        assert latency.finished == (("completed", len(logged)),)
