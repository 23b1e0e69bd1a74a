"""vLLM 0.6.6 (V0 engine) /metrics pages, as its source writes them.

From the vllm 0.6.6 wheel: the OpenAI server always sets PROMETHEUS_MULTIPROC_DIR
(`entrypoints/openai/api_server.py:163-170`), so the page is a multiprocess merge (no `_created`);
series carry `model_name` only (`engine/llm_engine.py:376-380`); gauges are `multiprocess_mode="sum"`
(`engine/metrics.py:56-102,238-247`). The spec counters are *sums of the sampler's running totals*:
every ~5 s the logger adds the cumulative accepted/draft/emitted counts to them
(`engine/metrics.py:686-694`; `spec_decode/metrics.py:132-140,164-166`), and the acceptance and
efficiency gauges are accepted / draft and emitted / (draft / k × (k + 1)) since start
(`spec_decode/metrics.py:171-179,191-202`). `generation_tokens_total` adds batched minus prompt
tokens each step: one per sequence per step (`engine/llm_engine.py:1758-1766`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.fake_servers import MODEL
from tests.support.multiprocess_pages import MultiprocessDir


@dataclass(frozen=True)
class V0Sampler:
    """The rejection sampler's running totals at one 5 s collection."""

    draft: int
    accepted: int
    emitted: int


@dataclass(frozen=True)
class V0State:
    collections: tuple[V0Sampler, ...]  # every collection so far, oldest first
    generated: int  # one per sequence per step
    steps: int  # engine steps (iteration_tokens_total observations)
    running: int = 4
    k: int = 3


def v0_page(path: Path, state: V0State, pid: int = 4242) -> str:
    mp = MultiprocessDir(path)
    labels = {"model_name": MODEL}
    for name, doc, value in (
        ("vllm:num_requests_running", "Number of requests currently running on GPU.", state.running),
        ("vllm:num_requests_waiting", "Number of requests waiting to be processed.", 0),
        ("vllm:num_requests_swapped", "Number of requests swapped to CPU.", 0),
        ("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", 0.2),
        ("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", 0.0),
    ):
        mp.gauge(pid, name, doc, labels, value, "sum")
    mp.counter(pid, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels, 5000)
    mp.counter(
        pid, "vllm:generation_tokens", "Number of generation tokens processed.", labels, state.generated
    )
    mp.histogram(
        pid,
        "vllm:iteration_tokens_total",
        "Histogram of number of tokens per engine_step.",
        labels,
        state.steps,
        state.steps * 4,
        (1, 8, 16),
    )
    mp.histogram(
        pid,
        "vllm:time_per_output_token_seconds",
        "Histogram of time per output token in seconds.",
        labels,
        state.generated,
        state.generated * 0.03,
        (0.01, 0.025),
    )
    if state.collections:
        last = state.collections[-1]
        mp.gauge(
            pid,
            "vllm:spec_decode_draft_acceptance_rate",
            "Speulative token acceptance rate.",
            labels,
            last.accepted / last.draft,
            "sum",
        )
        max_emitted = last.draft // state.k * (state.k + 1)
        mp.gauge(
            pid,
            "vllm:spec_decode_efficiency",
            "Speculative decoding system efficiency.",
            labels,
            last.emitted / max_emitted,
            "sum",
        )
        for name, doc, field in (
            ("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", "accepted"),
            ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", "draft"),
            ("vllm:spec_decode_num_emitted_tokens", "Number of emitted tokens.", "emitted"),
        ):
            mp.counter(pid, name, doc, labels, sum(getattr(c, field) for c in state.collections))
    return mp.page()
