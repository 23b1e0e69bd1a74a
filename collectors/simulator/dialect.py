"""The llama-server JSON dialect: request parameters, /props, /v1/models, /slots, completions.

Shapes and key order follow real llama-server output (the captured fixtures): float sampling
parameters print as the double of a float32 (0.8 -> 0.800000011920929), `timings` carries
`draft_n`/`draft_n_accepted` only when something was drafted, and `/props` always reports
`"speculative.types": "none"` (a real-server quirk) while `/slots` shows the arm's real types.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from collectors.simulator.profiles import Profile
from collectors.simulator.tasks import SlotView, TaskResult, Timings

BUILD_INFO = "b11669-simulated"
CHAT_TEMPLATE = (
    "{%- for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)
CHAT_GENERATION_PROMPT = "<|im_start|>assistant\n"
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
SAMPLERS = ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"]


def f32(x: float) -> float:
    """`x` as a C float shown as a double, the way llama-server prints sampling parameters."""
    value: float = struct.unpack("f", struct.pack("f", float(x)))[0]
    return value


# (key, default, in the compact form too); floats are float32 on the server.
_PARAMS: tuple[tuple[str, Any, bool], ...] = (
    ("seed", 4294967295, True),
    ("temperature", f32(0.8), True),
    ("dynatemp_range", 0.0, True),
    ("dynatemp_exponent", 1.0, True),
    ("top_k", 40, True),
    ("top_p", f32(0.95), True),
    ("min_p", f32(0.05), True),
    ("top_n_sigma", -1.0, True),
    ("xtc_probability", 0.0, True),
    ("xtc_threshold", f32(0.1), True),
    ("typical_p", 1.0, True),
    ("repeat_last_n", 64, True),
    ("repeat_penalty", 1.0, True),
    ("presence_penalty", 0.0, True),
    ("frequency_penalty", 0.0, True),
    ("dry_multiplier", 0.0, True),
    ("dry_base", 1.75, True),
    ("dry_allowed_length", 2, True),
    ("dry_penalty_last_n", 64, True),
    ("dry_sequence_breakers", ["\n", ":", '"', "*"], False),
    ("mirostat", 0, True),
    ("mirostat_tau", 5.0, True),
    ("mirostat_eta", f32(0.1), True),
    ("adaptive_target", -1.0, True),
    ("adaptive_decay", f32(0.9), True),
    ("stop", [], False),
    ("max_tokens", -1, True),
    ("n_predict", -1, True),
    ("n_keep", 0, True),
    ("n_discard", 0, True),
    ("ignore_eos", False, True),
    ("stream", False, True),
    ("logit_bias", [], False),
    ("n_probs", 0, True),
    ("min_keep", 0, True),
    ("grammar", "", False),
    ("grammar_lazy", False, False),
    ("grammar_triggers", [], False),
    ("preserved_tokens", [], False),
    ("chat_format", "Content-only", True),
    ("reasoning_format", "deepseek", True),
    ("reasoning_in_content", False, True),
    ("generation_prompt", "", True),
    ("samplers", SAMPLERS, True),
    ("speculative.types", "none", True),
    ("timings_per_token", False, True),
    ("post_sampling_probs", False, True),
    ("backend_sampling", False, True),
    ("lora", [], True),
)
_READABLE = {
    "seed",
    "temperature",
    "dynatemp_range",
    "dynatemp_exponent",
    "top_k",
    "top_p",
    "min_p",
    "top_n_sigma",
    "xtc_probability",
    "xtc_threshold",
    "typical_p",
    "repeat_last_n",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "dry_multiplier",
    "dry_base",
    "dry_allowed_length",
    "dry_penalty_last_n",
    "mirostat",
    "mirostat_tau",
    "mirostat_eta",
    "n_keep",
    "n_discard",
    "ignore_eos",
    "stream",
    "n_probs",
    "min_keep",
    "timings_per_token",
    "post_sampling_probs",
}


def task_params(body: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Full request parameters (`generation_settings`): defaults, then the request's, then ours."""
    params: dict[str, Any] = {}
    for key, default, _ in _PARAMS:
        value = default
        raw = body.get(key)
        if key in _READABLE and raw is not None and type(raw) in (int, float, bool):
            if isinstance(default, bool):
                value = bool(raw)
            elif isinstance(default, float):
                value = f32(raw)
            elif not isinstance(raw, bool):
                value = int(raw)
        params[key] = overrides.get(key, value)
    return params


def compact_params(full: Mapping[str, Any]) -> dict[str, Any]:
    """The compact form of the parameters, as `/slots` and `/props` show them."""
    return {key: full[key] for key, _, compact in _PARAMS if compact}


def timings_json(t: Timings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "cache_n": t.cache_n,
        "prompt_n": t.prompt_n,
        "prompt_ms": round(t.prompt_ms, 3),
        "prompt_per_token_ms": t.prompt_ms / t.prompt_n if t.prompt_n else 0.0,
        "prompt_per_second": 1e3 / t.prompt_ms * t.prompt_n if t.prompt_ms > 0 else 0.0,
        "predicted_n": t.predicted_n,
        "predicted_ms": round(t.predicted_ms, 3),
        "predicted_per_token_ms": t.predicted_ms / (t.predicted_n - 1) if t.predicted_n > 1 else 0.0,
        "predicted_per_second": (
            1e3 / t.predicted_ms * (t.predicted_n - 1) if t.predicted_ms > 0 and t.predicted_n > 1 else 0.0
        ),
    }
    if t.draft_n > 0:
        out["draft_n"] = t.draft_n
        out["draft_n_accepted"] = t.draft_n_accepted
    return out


def usage_json(r: TaskResult) -> dict[str, Any]:
    return {
        "completion_tokens": r.n_decoded,
        "prompt_tokens": r.n_prompt,
        "total_tokens": r.n_decoded + r.n_prompt,
        "prompt_tokens_details": {"cached_tokens": r.timings.cache_n},
    }


def props_json(profile: Profile, n_slots: int, n_ctx: int) -> dict[str, Any]:
    params = compact_params(task_params({}, {"reasoning_format": "none"}))
    return {
        "default_generation_settings": {"params": params, "n_ctx": n_ctx},
        "total_slots": n_slots,
        "model_alias": profile.model_alias,
        "model_ftype": profile.model_ftype,
        "model_path": f"models/{profile.model_alias}",
        "modalities": {"vision": False, "video": False, "audio": False},
        "media_marker": "<__media_sim0000000000000000000000000000__>",
        "endpoint_slots": True,
        "endpoint_props": False,
        "endpoint_metrics": True,
        "ui": True,
        "ui_settings": {},
        "chat_template": CHAT_TEMPLATE,
        "chat_template_caps": {
            "supports_object_arguments": False,
            "supports_parallel_tool_calls": False,
            "supports_preserve_reasoning": False,
            "supports_reasoning_effort": False,
            "supports_string_content": True,
            "supports_system_role": True,
            "supports_tool_calls": False,
            "supports_tools": False,
            "supports_typed_content": False,
        },
        "bos_token": "<|endoftext|>",
        "eos_token": "<|im_end|>",
        "build_info": BUILD_INFO,
        "is_sleeping": False,
        "cors_proxy_enabled": False,
    }


def models_json(profile: Profile, n_ctx: int, created: int) -> dict[str, Any]:
    name = profile.model_alias
    return {
        "models": [
            {
                "name": name,
                "model": name,
                "modified_at": "",
                "size": "",
                "digest": "",
                "type": "model",
                "description": "",
                "tags": [""],
                "capabilities": ["completion"],
                "parameters": "",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "",
                    "families": [""],
                    "parameter_size": "",
                    "quantization_level": "",
                },
            }
        ],
        "object": "list",
        "data": [
            {
                "id": name,
                "aliases": [name],
                "tags": [],
                "object": "model",
                "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
                "created": created,
                "owned_by": "llamacpp",
                "meta": {
                    "vocab_type": 2,
                    "n_vocab": profile.n_vocab,
                    "n_ctx": n_ctx,
                    "n_ctx_train": profile.n_ctx_train,
                    "n_embd": profile.n_embd,
                    "n_params": profile.model_n_params,
                    "size": profile.model_size_bytes,
                    "ftype": profile.model_ftype,
                },
            }
        ],
    }


def slot_json(view: SlotView, n_ctx: int, speculative: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": view.id,
        "n_ctx": n_ctx,
        "speculative": speculative,
        "is_processing": view.is_processing,
    }
    if view.id_task is None:
        return out
    out.update(
        {
            "id_task": view.id_task,
            "n_prompt_tokens": view.n_prompt_tokens,
            "n_prompt_tokens_processed": view.n_prompt_tokens_processed,
            "n_prompt_tokens_cache": view.n_prompt_tokens_cache,
            "params": dict(view.params),
            "next_token": [
                {
                    "has_next_token": view.has_next_token,
                    "has_new_line": view.has_new_line,
                    "n_remain": view.n_remain,
                    "n_decoded": view.n_decoded,
                }
            ],
        }
    )
    return out


def chat_prompt(messages: Any) -> str:
    """Render OpenAI chat messages with the model's ChatML template; ValueError if malformed."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty array")
    parts: list[str] = []
    if not (isinstance(messages[0], dict) and messages[0].get("role") == "system"):
        parts.append(f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n")
    for msg in messages:
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise ValueError("each message needs a string 'role'")
        content = msg.get("content", "")
        if isinstance(content, list):
            texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "\n".join(t for t in texts if isinstance(t, str))
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise ValueError("message 'content' must be a string or an array of text parts")
        parts.append(f"<|im_start|>{msg['role']}\n{content}<|im_end|>\n")
    parts.append(CHAT_GENERATION_PROMPT)
    return "".join(parts)
