"""Which command-line flags ask a server for speculative decoding, and the command without them.

Covers llama-server (every `--spec-*`/`--draft-*` flag and its short aliases, per `--help` of the
pinned build), vLLM (`--speculative-config`/`-sc`, `--spec-*`) and SGLang (`--speculative-*`), in
both `--flag value` and `--flag=value` forms. Pure functions over argv lists; nothing is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

# Speculative flags that take a value, per llama-server `--help` (this build), vLLM and SGLang.
_VALUE_FLAGS = frozenset(
    # llama-server: canonical names and their aliases
    "--spec-type -md --model-draft --spec-draft-model -hfd -hfrd --hf-repo-draft --spec-draft-hf "
    "--spec-draft-n-max --spec-draft-n-min --spec-draft-p-min --draft-p-min --spec-draft-p-split "
    "--draft-p-split --spec-draft-sampling -ngld --gpu-layers-draft --n-gpu-layers-draft "
    "--spec-draft-ngl -devd --device-draft --spec-draft-device -ctkd --cache-type-k-draft "
    "--spec-draft-type-k -ctvd --cache-type-v-draft --spec-draft-type-v -td --threads-draft "
    "--spec-draft-threads -tbd --threads-batch-draft --spec-draft-threads-batch -Cd --cpu-mask-draft "
    "--spec-draft-cpu-mask -Crd --cpu-range-draft --spec-draft-cpu-range --cpu-strict-draft "
    "--spec-draft-cpu-strict --prio-draft --spec-draft-prio --poll-draft --spec-draft-poll -Cbd "
    "--cpu-mask-batch-draft --spec-draft-cpu-mask-batch -Crbd --cpu-range-batch-draft "
    "--spec-draft-cpu-range-batch --cpu-strict-batch-draft --spec-draft-cpu-strict-batch "
    "--prio-batch-draft --spec-draft-prio-batch --poll-batch-draft --spec-draft-poll-batch -otd "
    "--override-tensor-draft --spec-draft-override-tensor -ncmoed --n-cpu-moe-draft "
    "--spec-draft-n-cpu-moe --spec-draft-ncmoe --spec-synth-len --spec-synth-rates "
    "--spec-ngram-mod-n-min --spec-ngram-mod-n-max --spec-ngram-mod-n-match "
    "--spec-ngram-simple-size-n --spec-ngram-simple-size-m --spec-ngram-simple-min-hits "
    "--spec-ngram-map-k-size-n --spec-ngram-map-k-size-m --spec-ngram-map-k-min-hits "
    "--spec-ngram-map-k4v-size-n --spec-ngram-map-k4v-size-m --spec-ngram-map-k4v-min-hits "
    "--spec-ngram-size-n --spec-ngram-size-m --spec-ngram-min-hits --draft --draft-n --draft-max "
    "--draft-min --draft-n-min -lcs --lookup-cache-static -lcd --lookup-cache-dynamic "
    # vLLM (current, then pre-0.7 spellings)
    "--speculative-config -sc --spec-method --spec-model --spec-tokens --speculative-model "
    "--num-speculative-tokens --speculative-draft-tensor-parallel-size --speculative-max-model-len "
    "--speculative-disable-by-batch-size --ngram-prompt-lookup-max --ngram-prompt-lookup-min "
    "--spec-decoding-acceptance-method --speculative-model-quantization "
    # SGLang
    "--speculative-algorithm --speculative-draft-model-path --speculative-draft-model "
    "--speculative-num-steps --speculative-eagle-topk --speculative-num-draft-tokens "
    "--speculative-adaptive-config --speculative-accept-threshold-single "
    "--speculative-accept-threshold-acc --speculative-token-map --speculative-attention-mode "
    "--speculative-draft-model-revision --speculative-draft-load-format".split()
)
_SWITCH_FLAGS = frozenset(
    "--spec-draft-backend-sampling --no-spec-draft-backend-sampling --spec-draft-cpu-moe -cmoed "
    "--cpu-moe-draft --spec-default --speculative-adaptive --speculative-disable-mqa-scorer".split()
)
# Not dropped: `--fim-qwen-7b-spec`/`--fim-qwen-14b-spec` also choose the target model (and never draft).
# Anything else spelled like these is speculative too; whether it takes a value is then guessed.
_SPEC_PATTERN = re.compile(r"^--(no-)?(spec-|speculative-|draft-)|^--[a-z0-9-]+-draft$")
_DRAFT_MODEL_FLAGS = frozenset(
    "-md --model-draft --spec-draft-model -hfd -hfrd --hf-repo-draft --spec-draft-hf".split()
)
_NUMBER = re.compile(r"^-\.?\d")
SPEC_ENV_PREFIXES = ("LLAMA_ARG_SPEC_", "LLAMA_ARG_DRAFT_", "LLAMA_ARG_N_GPU_LAYERS_DRAFT")


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NUMBER.match(token)


def _speculative_spans(argv: Sequence[str]) -> list[tuple[int, int]]:
    """Index ranges [start, end) of speculative flags with their values; argv[0] is the program."""
    spans: list[tuple[int, int]] = []
    i = 1
    while i < len(argv):
        token = argv[i]
        name, has_eq, _ = token.partition("=")
        known_value, known_switch = name in _VALUE_FLAGS, name in _SWITCH_FLAGS
        if not (known_value or known_switch or _SPEC_PATTERN.match(name)):
            i += 1
            continue
        end = i + 1
        if not has_eq and not known_switch and end < len(argv):
            if known_value or not _is_flag(argv[end]):
                end += 1
        spans.append((i, end))
        i = end
    return spans


def derive_plain_argv(draft_argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The drafting command without its speculative flags, and the tokens that were dropped."""
    argv = list(draft_argv)
    spans = _speculative_spans(argv)
    drop = {k for start, end in spans for k in range(start, end)}
    return [t for k, t in enumerate(argv) if k not in drop], [t for k, t in enumerate(argv) if k in drop]


def derive_plain_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """`env` without llama-server's speculative `LLAMA_ARG_*` variables, and the names dropped."""
    dropped = sorted(k for k in env if k.startswith(SPEC_ENV_PREFIXES))
    return {k: v for k, v in env.items() if k not in dropped}, dropped


def has_speculative_flags(argv: Sequence[str]) -> bool:
    """Whether the command asks for any kind of speculative decoding (or a draft model)."""
    return bool(_speculative_spans(argv))


def _flag_values(argv: Sequence[str], names: frozenset[str]) -> list[str]:
    values = []
    for start, end in _speculative_spans(argv):
        name, has_eq, value = argv[start].partition("=")
        if name in names:
            values.append(value if has_eq else (argv[start + 1] if end > start + 1 else ""))
    return values


def is_void_draft(argv: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
    """llama-server given a draft model but no `--spec-type`: the draft is loaded and never used.

    (Types are inferred only for MTP/Eagle3/DFlash sidecars; the server's `/slots` `speculative`
    field is the final word.)
    """
    env = os.environ if env is None else env
    if not _flag_values(argv, _DRAFT_MODEL_FLAGS):
        return False
    types = _flag_values(argv, frozenset({"--spec-type"}))
    if not types and env.get("LLAMA_ARG_SPEC_TYPE"):
        types = [env["LLAMA_ARG_SPEC_TYPE"]]
    named = {t.strip() for value in types for t in value.split(",")} - {""}
    default_mod = "--spec-default" in argv
    return not default_mod and (not named or "none" in named)
