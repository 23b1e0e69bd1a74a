"""What an engine's `/metrics` says about its state beyond drafting: KV-cache use, why requests
wait, preemptions, a sleeping engine (vLLM), SGLang's active draft steps, idle time and live
token count. Each is read when its series is on the page, else left unknown (None).

Sources (tests/support/engine_state_pages.py cites each line): vLLM 0.33
`v1/metrics/loggers.py:528-622` (`num_requests_waiting_by_reason{reason=capacity|deferred}`,
`engine_sleep_state{sleep_state=awake}`: 0 while the engine sleeps, `kv_cache_usage_perc`, a
share 0-1; 0.6.x's `gpu_cache_usage_perc`), `num_preemptions` (a counter); SGLang 0.5.23
`observability/metrics_collector.py` (`token_usage`, `spec_num_steps` :535-540,
`scheduler_idle_seconds_total` :1062-1068, `inter_token_latency_seconds` :2050-2055).
Pitfalls handled: with data parallelism a gauge has one value per engine (and, in multiprocess
pages, `pid` copies of one engine's figure, merged by their largest): KV use is the mean over
engines, waiting counts their sum; one sleeping engine makes the server sleeping (it draws idle
power with its weights offloaded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collectors.promtext import Sample
from collectors.servers import series

Samples = Mapping[str, list[Sample]]
MAX_REASONS = 8  # waiting reasons kept by name; the rest are "other"
VLLM_KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # 0.6.x's name second


def per_engine(metrics: Samples | None, name: str, **match: str) -> list[float]:
    """One value per engine (labels other than `pid` and `match`'s), `pid` copies merged by max."""
    merged: dict[tuple[tuple[str, str], ...], float] = {}
    for sample in (metrics or {}).get(name, []):
        if any(sample.labels.get(k) != v for k, v in match.items()):
            continue
        key = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "pid"))
        merged[key] = max(merged.get(key, sample.value), sample.value)
    return list(merged.values())


def per_engine_by(metrics: Samples | None, name: str, label: str) -> dict[str, list[float]]:
    """`per_engine` for every value of `label` at once, in one pass over the samples (a page can
    hold thousands of values: one pass each would be quadratic in the page's length)."""
    merged: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for sample in (metrics or {}).get(name, []):
        group = merged.setdefault(sample.labels.get(label, ""), {})
        key = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "pid"))
        group[key] = max(group.get(key, sample.value), sample.value)
    return {value: list(group.values()) for value, group in merged.items()}


def _waiting(metrics: Samples | None) -> tuple[tuple[str, int], ...]:
    """Waiting requests by reason, at most `MAX_REASONS` of them (the most waiting first, by name
    on a tie) and the rest summed as "other": vLLM names two reasons, a page naming thousands is
    not to be served as thousands of series."""
    by_reason = per_engine_by(metrics, "vllm:num_requests_waiting_by_reason", "reason")
    counts = sorted(
        ((r, series.as_int(sum(v)) or 0) for r, v in by_reason.items()), key=lambda rc: (-rc[1], rc[0])
    )
    kept, rest = counts[:MAX_REASONS], counts[MAX_REASONS:]
    if rest:
        kept.append(("other", sum(n for _, n in rest)))
    return tuple(sorted(kept))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def vllm(metrics: Samples | None) -> dict[str, Any]:
    """The snapshot's engine-state fields from a vLLM page."""
    kv = next((v for name in VLLM_KV if (v := per_engine(metrics, name))), [])
    waiting = _waiting(metrics)
    awake = per_engine(metrics, "vllm:engine_sleep_state", sleep_state="awake")
    return {
        "kv_cache_usage": _mean(kv),
        "waiting_by_reason": waiting,
        "preemptions_total": series.as_int(series.total(metrics, "vllm:num_preemptions_total")),
        "engine_sleeping": any(v == 0 for v in awake) if awake else None,
    }


def sglang(metrics: Samples | None) -> dict[str, Any]:
    """The snapshot's engine-state fields from an SGLang page (summed over DP ranks)."""
    steps = per_engine(metrics, "sglang:spec_num_steps")
    return {
        "kv_cache_usage": _mean(per_engine(metrics, "sglang:token_usage")),
        "spec_num_steps": series.as_int(max(steps)) if steps else None,
        "idle_s_total": series.total(metrics, "sglang:scheduler_idle_seconds_total"),
        "itl_observations_total": series.as_int(
            series.total(metrics, "sglang:inter_token_latency_seconds_count")
        ),
    }
