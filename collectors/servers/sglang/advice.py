"""SGLang's advice: the `--speculative-*` flags, the settings the sweep prints, its snapshot's notes.

Drafts of N are N steps of top-1 with N + 1 draft tokens (the root included); n-gram copying is
`--speculative-algorithm NGRAM`; no drafting is the command without the `--speculative-*` flags.
"""

from __future__ import annotations

from collectors.servers.advice import DialectAdvice, requests_text
from collectors.servers.snapshot import ServerSnapshot

VALUE_FLAGS = frozenset(
    "--speculative-algorithm --speculative-draft-model-path --speculative-draft-model "
    "--speculative-num-steps --speculative-eagle-topk --speculative-num-draft-tokens "
    "--speculative-adaptive-config --speculative-accept-threshold-single "
    "--speculative-accept-threshold-acc --speculative-token-map --speculative-attention-mode "
    "--speculative-draft-model-revision --speculative-draft-load-format".split()
)
SWITCH_FLAGS = frozenset({"--speculative-adaptive"})


class SglangAdvice(DialectAdvice):
    spec_value_flags = VALUE_FLAGS
    spec_switch_flags = SWITCH_FLAGS

    @classmethod
    def snapshot_notes(cls, snap: ServerSnapshot) -> list[str]:
        if not snap.drafting:
            return []
        return [
            "SGLang gives acceptance and G as gauges over its last 40 decode iterations, shown "
            "for a window that decoded; it has no drafted or accepted counts"
        ]

    @classmethod
    def plain_setting(cls, at: str) -> str:
        return f"SGLang {at}: run without the --speculative-* flags"

    @classmethod
    def draft_setting(cls, n: int, at: str) -> str:
        return (
            f"SGLang {at}: --speculative-num-steps {n} --speculative-eagle-topk 1 "
            f"--speculative-num-draft-tokens {n + 1}"
        )

    @classmethod
    def ngram_setting(cls, at: str) -> str:
        return f"SGLang {at}: --speculative-algorithm NGRAM"

    @classmethod
    def off_above(cls, batch: int, build: str | None, draft_tokens: int | None) -> str:
        return f"SGLang: run without a draft above {requests_text(batch)} (no --speculative-* flags there)"
