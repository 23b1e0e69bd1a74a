"""vLLM data parallelism: slot capacity over engines, API servers, and multiprocess pages.

Pitfalls handled (collectors/docs/servers.md, vLLM; read from vLLM 0.33.0 and 0.11.0):
- `max_num_seqs` is per engine: the slot total is max_num_seqs × the data-parallel size
  (`parallel_config.data_parallel_size`, else the number of `engine` label values on the page).
- `--data-parallel-size N` defaults `--api-server-count` to N (`entrypoints/cli/serve.py:107-129`),
  and an engine step's outputs reach every API server with a request in it; each observes
  `vllm:iteration_tokens_total` once per batch it receives (`v1/engine/async_llm.py:883`,
  `v1/metrics/loggers.py:1273`). With every API server busy, that histogram counts each step once
  per API server, so steps are its count divided by the API-server count.
- How many API servers: one when the page is single-process (it has `*_created` stamps or
  `process_*` series); else the dev-mode config's `parallel_config._api_process_count`, else the
  number of `pid` values on a gauge kept per process (multiprocess mode `all`, e.g. 0.11's
  `kv_cache_usage_perc`, registered by every API server at start), else the default, the DP size
  (an `--api-server-count` set by hand on 0.33 is then visible only in dev mode).
- Multiprocess pages give `pid`-labelled copies of an `all`-mode gauge, one per API server, each
  the engine figure that server last saw (0 until it saw one): copies of one engine's figure are
  merged by their largest, never summed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.promtext import Sample
from collectors.servers import series
from collectors.servers.shapes import INT, member

Samples = Mapping[str, list[Sample]]
PREFIX = "vllm:"
STEPS_HISTOGRAM = "vllm:iteration_tokens_total_count"  # one observation per engine step and API server


def single_process(metrics: Samples | None) -> bool:
    """The page comes from one process's registry: it has `_created` stamps or `process_*` series."""
    return any(
        (name.startswith(PREFIX) and name.endswith("_created")) or name.startswith("process_")
        for name in (metrics or {})
    )


def engine_count(metrics: Samples | None, name: str) -> int:
    """How many `engine` label values `name` has (0 when absent)."""
    return len({s.labels.get("engine", "") for s in (metrics or {}).get(name, [])})


def dp_size(config: dict[str, Any] | None, metrics: Samples | None, name: str) -> int | None:
    """The data-parallel size: the dev-mode config's, else the engines on the page."""
    value = member(config, "parallel_config", "data_parallel_size")
    if INT.test(value) and value > 0:
        return int(value)
    return engine_count(metrics, name) or None


def pids(metrics: Samples | None) -> set[str]:
    """The `pid` values on any vLLM gauge: one per API server process in multiprocess mode."""
    return {
        s.labels["pid"]
        for name, rows in (metrics or {}).items()
        if name.startswith(PREFIX)
        for s in rows
        if "pid" in s.labels
    }


def api_servers(config: dict[str, Any] | None, metrics: Samples | None, name: str) -> int:
    """How many API servers feed the page (the default, the DP size, where nothing says)."""
    if single_process(metrics):
        return 1
    counted = member(config, "parallel_config", "_api_process_count")
    if INT.test(counted) and counted > 0:
        return int(counted)
    seen = len(pids(metrics))
    if seen:
        return seen
    return dp_size(config, metrics, name) or 1


def steps(config: dict[str, Any] | None, observations: float | None, metrics: Samples | None) -> float | None:
    """Engine steps from the iteration histogram's observations (one per step and API server)."""
    return None if observations is None else observations / api_servers(config, metrics, STEPS_HISTOGRAM)


def requests_per_step(
    prev: Samples | None, cur: Samples | None, config: dict[str, Any] | None, step_latency: str | None
) -> float | None:
    """Σ requests over steps / steps in the window: the step-latency histogram gets one observation
    per decoding request per step, the iteration histogram one per step and API server (prefill-only
    steps count in the denominator)."""
    steps_grown = steps(config, series.delta(prev, cur, STEPS_HISTOGRAM), cur)
    observed = series.delta(prev, cur, step_latency) if step_latency else None
    return None if steps_grown is None or observed is None or steps_grown <= 0 else observed / steps_grown


def max_num_seqs(config: dict[str, Any] | None) -> int | None:
    """One engine's request capacity, from the dev-mode config."""
    value = member(config, "scheduler_config", "max_num_seqs")
    return value if INT.test(value) else None


def slots_total(config: dict[str, Any] | None, metrics: Samples | None, name: str) -> int | None:
    """Requests the server can run at once: max_num_seqs on each data-parallel engine."""
    per_engine = max_num_seqs(config)
    return None if per_engine is None else per_engine * (dp_size(config, metrics, name) or 1)


def gauge_total(metrics: Samples | None, name: str) -> float | None:
    """A gauge summed over engines, `pid` copies of one engine's figure merged by their largest."""
    per_key: dict[tuple[tuple[str, str], ...], float] = {}
    for sample in (metrics or {}).get(name, []):
        key = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "pid"))
        per_key[key] = max(per_key.get(key, sample.value), sample.value)
    return sum(per_key.values()) if per_key else None
