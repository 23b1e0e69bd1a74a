"""vLLM data-parallel pages with several API servers, as the released source writes them.

Read from vLLM 0.33.0 (and 0.11.0 where it differs):
- `--data-parallel-size N` defaults `--api-server-count` to N (vllm/entrypoints/cli/serve.py:107-129);
  with more than one API server the page is prometheus_client's multiprocess merge
  (vllm/v1/metrics/prometheus.py:39-53): no `*_created`, no `process_*`.
- An engine step's outputs go to each API server that has a request in it (vllm/v1/engine/core.py
  `output_queue.put_nowait((client_index, …))`); each API server makes one `IterationStats` per
  batch it receives (vllm/v1/engine/async_llm.py:883-885) and observes `vllm:iteration_tokens_total`
  once for it (vllm/v1/metrics/loggers.py:1273-1276). So with every API server busy on an engine,
  the histogram counts each step once per API server.
- The scheduler's stats (running, waiting, spec decode counts) go to one API server per step
  (vllm/v1/core/sched/scheduler.py:2669-2674): spec counters are counted once; the gauges are
  `multiprocess_mode="mostrecent"` (loggers.py:528-556 in 0.33), so the newest write wins, no `pid`.
- 0.11.0's `vllm:kv_cache_usage_perc` has no multiprocess_mode (loggers.py:251-254 in 0.11.0): the
  default `all`, one series per API server with a `pid` label (each registers it at 0 at start,
  `make_per_engine` loggers.py:628-630).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.fake_servers import MODEL, VllmEngine
from tests.support.multiprocess_pages import MultiprocessDir


@dataclass(frozen=True)
class ApiServer:
    """One API server process: its own counts per engine (index = engine), and when it last
    recorded the engines' scheduler gauges (wall seconds; `mostrecent` keeps the newest)."""

    pid: int
    engines: tuple[VllmEngine, ...]
    stats_at: float
    kv_cache_usage: float = 0.0


def dp_page(path: Path, servers: list[ApiServer], version: str = "0.33.0", spec: bool = True) -> str:
    """The /metrics page of one vLLM with len(servers) API servers, each writing to `path`."""
    mp = MultiprocessDir(path)
    kv_mode = "all" if version.startswith("0.11") else "mostrecent"
    step_latency = ["vllm:inter_token_latency_seconds"]
    if version.startswith("0.11"):
        step_latency.append("vllm:time_per_output_token_seconds")
    for server in servers:
        for i, e in enumerate(server.engines):
            labels = {"model_name": MODEL, "engine": str(i)}
            for name, doc, value in (
                ("vllm:num_requests_running", "Number of requests in model execution batches.", e.running),
                ("vllm:num_requests_waiting", "Number of requests waiting to be processed.", e.waiting),
            ):
                mp.gauge(server.pid, name, doc, labels, value, "mostrecent", server.stats_at)
            mp.gauge(
                server.pid,
                "vllm:kv_cache_usage_perc",
                "KV-cache usage. 1 means 100 percent usage.",
                labels,
                server.kv_cache_usage,
                kv_mode,
                server.stats_at,
            )
            mp.counter(
                server.pid, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels, e.prompt
            )
            mp.counter(
                server.pid,
                "vllm:generation_tokens",
                "Number of generation tokens processed.",
                labels,
                e.generated,
            )
            mp.histogram(
                server.pid,
                "vllm:iteration_tokens_total",
                "Histogram of number of tokens per engine_step.",
                labels,
                e.steps,
                e.steps * 9,
                (1, 8, 16),
            )
            for name in step_latency:
                mp.histogram(
                    server.pid,
                    name,
                    "Histogram of inter-token latency in seconds.",
                    labels,
                    e.itl,
                    e.itl * 0.02,
                    (0.01,),
                )
            if spec:
                mp.counter(
                    server.pid,
                    "vllm:spec_decode_num_drafts",
                    "Number of spec decoding drafts.",
                    labels,
                    e.drafts,
                )
                mp.counter(
                    server.pid,
                    "vllm:spec_decode_num_draft_tokens",
                    "Number of draft tokens.",
                    labels,
                    e.draft_tokens,
                )
                mp.counter(
                    server.pid,
                    "vllm:spec_decode_num_accepted_tokens",
                    "Number of accepted tokens.",
                    labels,
                    e.accepted,
                )
                for pos, value in enumerate(e.per_pos):
                    mp.counter(
                        server.pid,
                        "vllm:spec_decode_num_accepted_tokens_per_pos",
                        "Accepted tokens per draft position.",
                        {**labels, "position": str(pos)},
                        value,
                    )
    return mp.page()
