"""Prometheus text pages: llama-server's `/metrics` and a dcgm-exporter page.

llama-server writes scalar values with a default C++ stream (6 significant digits, so 1234567
reads `1.23457e+06`) and per-position counters as exact integers. dcgm-exporter writes floats
with Go's `%f` and integer fields as integers, every sample carrying the device labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from collectors.simulator.counters import MetricsView

LLAMA_METRICS: tuple[tuple[str, str, str], ...] = (
    ("prompt_tokens_total", "counter", "Number of prompt tokens processed, excluding cached tokens"),
    ("prompt_tokens_cached_total", "counter", "Number of prompt tokens reused from the cache"),
    ("prompt_seconds_total", "counter", "Total time spent processing prompts"),
    ("tokens_predicted_total", "counter", "Number of generation tokens processed"),
    ("tokens_predicted_seconds_total", "counter", "Total time spent generating tokens"),
    (
        "n_decode_total",
        "counter",
        "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding",
    ),
    ("n_tokens_max", "counter", "Largest observed sequence length (prompt + generation)"),
    ("spec_decode_num_draft_tokens_total", "counter", "Speculative: Total draft tokens generated"),
    (
        "spec_decode_num_accepted_tokens_total",
        "counter",
        "Speculative: Total draft tokens accepted by the target model",
    ),
    ("spec_decode_num_drafts_total", "counter", "Speculative: Total speculative decoding verification steps"),
    ("prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s"),
    ("predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s"),
    ("requests_processing", "gauge", "Number of requests processing"),
    ("requests_deferred", "gauge", "Number of requests deferred"),
    ("n_busy_slots_per_decode", "gauge", "Average number of busy slots per llama_decode() call"),
)
PER_POS = ("spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position")


def cpp_number(value: float) -> str:
    """A double as `std::stringstream << value` writes it (6 significant digits)."""
    return f"{value:g}"


def llama_metrics_text(m: MetricsView) -> str:
    values = (
        m.prompt_tokens,
        m.prompt_tokens_cached,
        m.prompt_seconds,
        m.tokens_predicted,
        m.tokens_predicted_seconds,
        m.n_decode,
        m.n_tokens_max,
        m.draft_tokens,
        m.accepted_tokens,
        m.drafts,
        m.prompt_tokens_per_s,
        m.predicted_tokens_per_s,
        m.requests_processing,
        m.requests_deferred,
        m.busy_slots_per_decode,
    )
    lines: list[str] = []
    for (name, kind, help_text), value in zip(LLAMA_METRICS, values):
        lines += [
            f"# HELP llamacpp:{name} {help_text}",
            f"# TYPE llamacpp:{name} {kind}",
            f"llamacpp:{name} {cpp_number(float(value))}",
        ]
    if m.accepted_per_pos:
        name, kind, help_text = PER_POS
        lines += [f"# HELP llamacpp:{name} {help_text}", f"# TYPE llamacpp:{name} {kind}"]
        lines += [f'llamacpp:{name}{{position="{i}"}} {n}' for i, n in enumerate(m.accepted_per_pos)]
    return "\n".join(lines) + "\n"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def dcgm_text(labels: Mapping[str, str], fields: Sequence[tuple[str, str, str, float | int]]) -> str:
    """A dcgm-exporter page for one GPU: `fields` are (name, type, help, value)."""
    label_text = ",".join(f'{k}="{_escape_label(v)}"' for k, v in labels.items())
    lines: list[str] = []
    for name, kind, help_text, value in fields:
        text = str(value) if isinstance(value, int) else f"{value:f}"
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name}{{{label_text}}} {text}"]
    return "\n".join(lines) + "\n"
