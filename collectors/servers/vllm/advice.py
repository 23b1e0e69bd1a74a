"""vLLM's command line: `--speculative-config` and its older flags, and the settings the sweep prints.

A setting is a field of `--speculative-config` (`num_speculative_tokens`; `"method": "ngram"` with
`prompt_lookup_max` for copying). Stopping drafting above a batch depends on the version, as its
vllm/config/speculative.py says: 0.11.0 declares `disable_by_batch_size` (and checks it is at
least 2) but no other file of the release reads it, so it changes nothing; 0.33.0 has no such
field (its configs forbid unknown fields, so passing it is an error) and has
`num_speculative_tokens_per_batch_size`, a list of inclusive (first batch, last batch, K) ranges
whose last K holds beyond it, K = 0 allowed.
"""

from __future__ import annotations

import json
import re

from collectors.servers.advice import DialectAdvice, requests_text

VALUE_FLAGS = frozenset(
    # current, then pre-0.7 spellings
    "--speculative-config -sc --spec-method --spec-model --spec-tokens --speculative-model "
    "--num-speculative-tokens --speculative-draft-tensor-parallel-size --speculative-max-model-len "
    "--speculative-disable-by-batch-size --ngram-prompt-lookup-max --ngram-prompt-lookup-min "
    "--spec-decoding-acceptance-method --speculative-model-quantization".split()
)
SWITCH_FLAGS = frozenset({"--speculative-disable-mqa-scorer"})


def version(build: str | None) -> tuple[int, int] | None:
    """(major, minor) of a build string such as "0.11.0" or "0.33.0rc1+cu129"; None if unreadable."""
    found = re.match(r"\s*v?(\d+)\.(\d+)", build or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


class VllmAdvice(DialectAdvice):
    spec_value_flags = VALUE_FLAGS
    spec_switch_flags = SWITCH_FLAGS
    no_counts_hint = (
        "vLLM: start it with --per-request-spec-decode-metrics summary, or without --disable-log-stats"
    )
    no_request_counts_hint = "vLLM: start it with --per-request-spec-decode-metrics summary"

    @classmethod
    def plain_setting(cls, at: str) -> str:
        return f"vLLM {at}: run without --speculative-config"

    @classmethod
    def draft_setting(cls, n: int, at: str) -> str:
        return f"vLLM {at}: --speculative-config '{json.dumps({'num_speculative_tokens': n})}' (with your draft model)"

    @classmethod
    def ngram_setting(cls, at: str) -> str:
        config = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
        return f"vLLM {at}: --speculative-config '{json.dumps(config)}'"

    @classmethod
    def off_above(cls, batch: int, build: str | None, draft_tokens: int | None) -> str:
        release = version(build)
        if release is not None and release >= (0, 33):
            k = draft_tokens if draft_tokens is not None else "K"
            schedule = f"[[1, {batch}, {k}], [{batch + 1}, {batch + 1}, 0]]"
            return (
                f'vLLM: add "num_speculative_tokens_per_batch_size": {schedule} to --speculative-config '
                f"(no drafting above {requests_text(batch)})"
            )
        if release == (0, 11):
            return (
                f"vLLM 0.11: run without --speculative-config above {requests_text(batch)} "
                "(its disable_by_batch_size is declared but read by nothing in 0.11)"
            )
        return (
            f"vLLM: run without --speculative-config above {requests_text(batch)} (0.33 and later: "
            f'"num_speculative_tokens_per_batch_size" with K = 0 above {batch}; see your version\'s '
            "vllm/config/speculative.py)"
        )
