"""A launched drafting server's command with a schedule applied, and with speculation configured
and nothing drafted (K = 0): what `spectop sweep --tune` starts as its scheduled and k0 arms.

vLLM (0.33.0): the form's two fields are merged into the command's `--speculative-config` JSON,
its method and model kept (`num_speculative_tokens` must stay > 0, vllm/config/speculative.py:413,
so K = 0 is a schedule of zeros: `[[1, 65536, 0]]`, capped at max_num_seqs by the dense lookup,
vllm/v1/spec_decode/dynamic/utils.py:113-125). SGLang (0.5.23): the adaptive flags replace the
command's step, topk and draft-token flags (SGLang sets draft tokens to steps + 1 at topk 1,
arg_groups/speculative_hook.py:1402-1427), and the config file is written where the command can
read it; K = 0 is one slot whose only candidate is 0. Other engines have no such setting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from collectors.errors import SpectopError
from collectors.servers.schedule_form import ScheduleForm, flag_value

_VLLM_CONFIG = frozenset({"--speculative-config", "-sc"})
# SGLang flags the adaptive form decides (dropped from the command before its flags are added)
_SGLANG_REPLACED = frozenset(
    {
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--speculative-adaptive-config",
    }
)
K0_SLOT = {"1": {"candidate_steps": [0]}}
K0_RANGES = [[1, 65536, 0]]


def without_flags(
    argv: Sequence[str], names: frozenset[str], bare: frozenset[str] = frozenset()
) -> list[str]:
    """`argv` without the flags `names` (with their values) and the valueless flags `bare`."""
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
            continue
        name, eq, _ = token.partition("=")
        if name in names:
            skip = not eq
            continue
        if token not in bare:
            out.append(token)
    return out


def _vllm(argv: Sequence[str], fields: dict[str, object]) -> list[str]:
    text = flag_value(argv, _VLLM_CONFIG)
    try:
        config = json.loads(text) if text else {}
    except ValueError:
        config = None
    if not isinstance(config, dict):
        raise SpectopError(
            "the draft command's --speculative-config is not a JSON object", "give it as '{\"method\": ...}'"
        )
    merged = {**config, **fields}
    return [*without_flags(argv, _VLLM_CONFIG), "--speculative-config", json.dumps(merged)]


def _sglang(argv: Sequence[str], flags: Sequence[str]) -> list[str]:
    return [*without_flags(argv, _SGLANG_REPLACED, frozenset({"--speculative-adaptive"})), *flags]


def scheduled_argv(
    backend: str | None, argv: Sequence[str], form: ScheduleForm, directory: Path
) -> list[str]:
    """The draft command started with the schedule's form; its files written into `directory`."""
    if form.refused:
        raise SpectopError(f"the schedule cannot be applied: {form.refused}", "see spectop tune RESULTS")
    for name, text in form.files.items():
        (directory / name).write_text(text)
    flags = [str(directory / f) if f in form.files else f for f in form.flags]
    if backend == "vllm":
        fields = json.loads(flag_value(flags, _VLLM_CONFIG) or "{}")
        return _vllm(argv, fields)
    if backend == "sglang":
        return _sglang(argv, flags)
    raise SpectopError(
        f"{backend or 'this server'} has no setting that drafts by batch", "route by batch instead"
    )


def k0_argv(backend: str | None, argv: Sequence[str], directory: Path) -> list[str] | None:
    """The draft command with speculation configured and nothing drafted; None where the engine
    cannot express it."""
    if backend == "vllm":
        return _vllm(argv, {"num_speculative_tokens_per_batch_size": K0_RANGES})
    if backend == "sglang":
        path = directory / "k0-adaptive.json"
        path.write_text(json.dumps(K0_SLOT) + "\n")
        flags = [
            "--speculative-adaptive",
            "--speculative-adaptive-config",
            str(path),
            "--speculative-num-steps",
            "0",
        ]
        return _sglang(argv, [*flags, "--speculative-eagle-topk", "1"])
    return None
