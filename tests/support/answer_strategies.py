"""Hypothesis strategies for what a server may send: JSON of a dialect's declared shape with one
value of another type, arbitrary JSON and bytes, /metrics pages with arbitrary values, SSE lines.

Pitfall handled: a poll reads several answers and stops at the first wrong one, so bodies drawn
at random seldom let a wrong value reach the code that reads it; bodies here are mostly of the
declared shape with at most one value wrong (`body_of`), and `mostly` draws a choice given twice
twice as often, where st.one_of would draw the catch-all half the time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from collectors.requests import streams
from collectors.servers.llamacpp import collector as llamacpp
from collectors.servers.shapes import INT, NUMBER, TEXT, ListOf, OneOf, Required, Scalar


def mostly(*choices: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """One of `choices`, each equally often (a choice given twice, twice as often)."""
    return st.sampled_from(choices).flatmap(lambda chosen: chosen)


FIELDS = [
    # llama-server /props and /slots
    "model_alias", "model_path", "build_info", "total_slots", "default_generation_settings", "n_ctx",
    "id", "id_task", "is_processing", "speculative", "params", "speculative.types", "next_token", "n_decoded",
    # SGLang /server_info and /v1/loads
    "loads", "num_running_reqs", "num_waiting_reqs", "max_running_requests", "accept_rate", "accept_length",
    "speculative_algorithm", "internal_states", "avg_spec_accept_length", "context_length", "version",
    "served_model_name", "effective_max_running_requests_per_dp", "speculative_num_draft_tokens", "startup_time",
    # vLLM /version, /v1/models, /server_info
    "data", "owned_by", "max_model_len", "vllm_config", "model_config", "scheduler_config", "max_num_seqs",
    "speculative_config", "method", "num_speculative_tokens",
    # stream events
    "content", "tokens_predicted", "tokens_evaluated", "stop", "stop_type", "timings", "predicted_n",
    "prompt_n", "cache_n", "draft_n", "draft_n_accepted", "predicted_ms", "model", "error", "choices",
    "delta", "message", "text", "finish_reason", "usage", "completion_tokens", "prompt_tokens", "metrics",
    "speculative_decoding", "num_draft_tokens", "num_accepted_draft_tokens", "num_spec_steps", "sglext",
    "spec_tokens_details", "spec_num_proposed_drafts", "spec_num_correct_drafts", "spec_verify_ct",
]  # fmt: skip
METRIC_NAMES = [
    "llamacpp:tokens_predicted_total", "llamacpp:spec_decode_num_draft_tokens_total",
    "llamacpp:spec_decode_num_accepted_tokens_total", "llamacpp:spec_decode_num_drafts_total",
    "llamacpp:n_decode_total", "llamacpp:n_busy_slots_per_decode", "llamacpp:requests_processing",
    "llamacpp:spec_decode_num_accepted_tokens_per_pos_total", "llamacpp:tokens_predicted_seconds_total",
    "vllm:generation_tokens_total", "vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
    "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:iteration_tokens_total_count",
    "vllm:inter_token_latency_seconds_count", "vllm:generation_tokens_created", "process_start_time_seconds",
    "sglang:realtime_tokens_total", "sglang:generation_tokens_total", "sglang:spec_verify_calls_total",
    "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:spec_accept_length", "sglang:spec_accept_rate",
    "sglang:spec_num_draft_tokens", "sglang:prompt_tokens_total",
]  # fmt: skip
LABELS = ["position", "engine", "model_name", "tp_rank", "dp_rank", "priority", "mode"]

keys = st.sampled_from(FIELDS) | st.text(max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6),
    max_leaves=30,
)
bodies = json_values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=64)


LIKELY = {  # a value of the kind a field should hold, wrong only at its edges (2**70, NaN)
    INT: st.integers(0, 2**20) | st.integers(-(2**70), 2**70),
    NUMBER: st.floats(allow_nan=True, allow_infinity=True) | st.integers(0, 2**20),
    TEXT: st.text(max_size=8),
}
NEAR_MISSES = [True, False, 3.5, 2.0, float("nan"), 1e400, "3", "", [], {}, [1], {"n": 1}, -(2**64), 2**64]
wrong = mostly(st.sampled_from(NEAR_MISSES), st.sampled_from(NEAR_MISSES), scalars | json_values)


@dataclass(frozen=True)
class Needed:
    """A field every answer has (shapes.py `Required`)."""

    template: object


def valid(template: object) -> st.SearchStrategy[Any]:
    """JSON of `template`: objects' fields (some absent), a list's item, a kind from shapes.py,
    None for any value."""
    if isinstance(template, dict):
        needed = {k: valid(v.template) for k, v in template.items() if isinstance(v, Needed)}
        optional = {k: valid(v) for k, v in template.items() if not isinstance(v, Needed)}
        return st.fixed_dictionaries(needed, optional=optional)
    if isinstance(template, list):
        return st.lists(valid(template[0]), max_size=3)
    if isinstance(template, tuple):  # shapes.py `OneOf`
        return st.one_of([valid(option) for option in template])
    return LIKELY[template] if isinstance(template, Scalar) else json_values


def paths(template: object) -> list[tuple[str | int, ...]]:
    """Every place in `template` a value can be wrong (a list's first item standing for all)."""
    if isinstance(template, Needed):
        return paths(template.template)
    if isinstance(template, dict):
        return [(k, *rest) for k, v in template.items() for rest in [(), *paths(v)]]
    if isinstance(template, list):
        return [(0, *rest) for rest in [(), *paths(template[0])]]
    return paths(template[0]) if isinstance(template, tuple) else []


def put(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    """`value` with `new` at `path`, making the objects and lists on the way."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(value) if isinstance(value, list) and value else [{}]
        items[0] = put(items[0], rest, new)
        return items
    fields = dict(value) if isinstance(value, dict) else {}
    fields[head] = put(fields.get(head), rest, new)
    return fields


def shaped_json(template: object) -> st.SearchStrategy[bytes]:
    """JSON of the template's shape, or with one value of another type (twice as often)."""
    encoded = valid(template).map(lambda v: json.dumps(v).encode())
    one_wrong = st.builds(put, valid(template), st.sampled_from(paths(template)), wrong)
    return mostly(encoded, *[one_wrong.map(lambda v: json.dumps(v).encode())] * 2)


def body_of(template: object) -> st.SearchStrategy[bytes]:
    """Mostly `shaped_json`, so the rest of an answer lets the poll through and a wrong value
    reaches the code that reads it; else anything."""
    shaped = shaped_json(template)
    return mostly(shaped, shaped, shaped, bodies)


def template_of(shape: object) -> object:
    """The template of a dialect's declared shape (collectors/servers/shapes.py)."""
    if isinstance(shape, Required):
        return Needed(template_of(shape.kind))
    if isinstance(shape, Mapping):
        return {k: template_of(v) for k, v in shape.items()}
    if isinstance(shape, ListOf):
        return [template_of(shape.item)]
    if isinstance(shape, OneOf):
        return tuple(template_of(option) for option in shape.options)
    return shape if isinstance(shape, Scalar) else None


PROPS_BODIES = body_of(template_of(llamacpp.PROPS))
SLOT = template_of(llamacpp.SLOTS.item) | {"is_processing": None, "speculative": None}  # read as truth values
SLOTS_BODIES = body_of([SLOT])
SLOTS_VALID = valid([SLOT]).map(lambda v: json.dumps(v).encode())  # for polls that test another answer
RANK = {"num_running_reqs": INT, "num_waiting_reqs": INT, "max_running_requests": INT}
RANK |= {"speculative": {"accept_length": NUMBER, "accept_rate": NUMBER}}
LOADS_BODIES = body_of({"loads": [RANK]})
SGLANG_INFO = {k: INT for k in ("max_running_requests", "context_length", "speculative_num_steps")}
SGLANG_INFO |= {k: INT for k in ("speculative_eagle_topk", "speculative_num_draft_tokens")}
SGLANG_INFO |= {k: TEXT for k in ("version", "served_model_name", "model_path", "speculative_algorithm")}
STATE = {"avg_spec_accept_length": NUMBER, "effective_max_running_requests_per_dp": INT}
SGLANG_INFO_BODIES = body_of(SGLANG_INFO | {"startup_time": NUMBER, "internal_states": [STATE]})
VERSION_BODIES = body_of({"version": TEXT})
MODELS_BODIES = body_of({"data": [{"id": TEXT, "max_model_len": INT, "owned_by": TEXT}]})
VLLM_CONFIG = {
    "model_config": {"max_model_len": INT},
    "scheduler_config": {"max_num_seqs": INT},
    "speculative_config": {"method": TEXT, "num_speculative_tokens": INT},
}
VLLM_INFO_BODIES = body_of({"vllm_config": VLLM_CONFIG})

label_values = st.sampled_from(["0", "1", "2", "", "decode", "x", "-1", "1e3"]) | st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters='"\\\n'), max_size=5
)
values = st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-(10**20), max_value=10**20)
samples = st.tuples(
    st.sampled_from(METRIC_NAMES), st.dictionaries(st.sampled_from(LABELS), label_values, max_size=3), values
)


def page(rows: list[tuple[str, dict[str, str], float]]) -> str:
    def labels(d: dict[str, str]) -> str:
        return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}" if d else ""

    return "".join(f"{name}{labels(d)} {value!r}\n" for name, d, value in rows)


metrics_pages = st.lists(samples, max_size=14).map(page) | st.text(max_size=80)


NATIVE_EVENTS = shaped_json(template_of(streams.NATIVE_EVENT))
OPENAI_CHUNKS = shaped_json(template_of(streams.OPENAI_CHUNK))
sse_lines = (
    st.text(max_size=40)
    | json_values.map(lambda v: "data: " + json.dumps(v))
    | (NATIVE_EVENTS | OPENAI_CHUNKS).map(lambda v: "data: " + v.decode())
    | st.sampled_from(["data: [DONE]", ": ping", "", "data:", "event: x"])
)
