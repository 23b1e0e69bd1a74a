"""The sweep's recommendation as the exact setting to apply, per engine: a line a user copies.

llama-server (the pinned build's `--help`): a draft length is `--spec-draft-n-max N` (`--draft-max`
was removed; older builds still take it), n-gram copying is `--spec-type ngram-simple` without a
draft model, and no drafting is the command without its speculative flags. vLLM: the fields of
`--speculative-config` (`num_speculative_tokens`; `"method": "ngram"` with `prompt_lookup_max` for
copying). Stopping drafting above a batch depends on the version, as its vllm/config/speculative.py
says: 0.11.0 declares `disable_by_batch_size` (and checks it is at least 2) but no other file of the
release reads it, so it changes nothing; 0.33.0 has no such field (its configs forbid unknown
fields, so passing it is an error) and has `num_speculative_tokens_per_batch_size`, a list of
inclusive (first batch, last batch, K) ranges whose last K holds beyond it, K = 0 allowed.
SGLang: the `--speculative-*` flags (drafts of N: N steps of top-1, N + 1 draft tokens; copying:
`--speculative-algorithm NGRAM`).

Pitfalls handled: an arm whose name does not say what it drafts (a user's `--arm fast=URL`) gets
its own command back, not a guessed flag; an engine spectop does not know gets the arm's name and
command, never another engine's flags.
"""

from __future__ import annotations

import json
import re

from collectors.servers.llamacpp.collector import BACKEND as LLAMACPP
from collectors.servers.sglang.collector import BACKEND as SGLANG
from collectors.servers.vllm.collector import BACKEND as VLLM


def draft_length(arm: str) -> int | None:
    """The draft length an arm's name says (`draft-4`: 4); None for any other name."""
    head, _, tail = arm.rpartition("-")
    return int(tail) if head == "draft" and tail.isdigit() else None


def _requests(n: int) -> str:
    return f"{n} concurrent request" + ("" if n == 1 else "s")


def setting_lines(arm: str, backend: str | None, command: str | None, batch: int) -> list[str]:
    """What to run for arm `arm` to be the setting at `batch` requests, on the arm's engine."""
    at = f"at {_requests(batch)}"
    n = draft_length(arm)
    if backend not in (LLAMACPP, VLLM, SGLANG):
        return [f"{at}: run the {arm} arm as measured" + (f": {command}" if command else "")]
    if arm == "plain":
        return [_plain(backend, at)]
    if n is not None:
        return [_draft(backend, n, at)]
    if arm == "ngram":
        return [_ngram(backend, at)]
    return [f"{at}: run the {arm} arm as measured" + (f": {command}" if command else "")]


def vllm_version(build: str | None) -> tuple[int, int] | None:
    """(major, minor) of a vLLM build string such as "0.11.0" or "0.33.0rc1+cu129"; None if unreadable."""
    found = re.match(r"\s*v?(\d+)\.(\d+)", build or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def off_above(
    backend: str | None, batch: int, build: str | None = None, draft_tokens: int | None = None
) -> str:
    """Drafting pays up to `batch` requests and costs beyond: the setting that stops it there.

    `build` is the server's reported version (vLLM's differ, see the module's docstring) and
    `draft_tokens` the draft length to keep below the batch, where the arm says one.
    """
    if backend == VLLM:
        return _vllm_off_above(batch, vllm_version(build), draft_tokens)
    if backend == SGLANG:
        return f"SGLang: run without a draft above {_requests(batch)} (no --speculative-* flags there)"
    return f"llama-server: run without a draft above {_requests(batch)}"


def _vllm_off_above(batch: int, version: tuple[int, int] | None, draft_tokens: int | None) -> str:
    if version is not None and version >= (0, 33):
        k = draft_tokens if draft_tokens is not None else "K"
        schedule = f"[[1, {batch}, {k}], [{batch + 1}, {batch + 1}, 0]]"
        return (
            f'vLLM: add "num_speculative_tokens_per_batch_size": {schedule} to --speculative-config '
            f"(no drafting above {_requests(batch)})"
        )
    if version == (0, 11):
        return (
            f"vLLM 0.11: run without --speculative-config above {_requests(batch)} "
            "(its disable_by_batch_size is declared but read by nothing in 0.11)"
        )
    return (
        f"vLLM: run without --speculative-config above {_requests(batch)} (0.33 and later: "
        f'"num_speculative_tokens_per_batch_size" with K = 0 above {batch}; see your version\'s '
        "vllm/config/speculative.py)"
    )


def _plain(backend: str | None, at: str) -> str:
    if backend == VLLM:
        return f"vLLM {at}: run without --speculative-config"
    if backend == SGLANG:
        return f"SGLang {at}: run without the --speculative-* flags"
    return f"llama-server {at}: run without a draft (drop -md and --spec-type, or --spec-type none)"


def _draft(backend: str | None, n: int, at: str) -> str:
    if backend == VLLM:
        return f"vLLM {at}: --speculative-config '{json.dumps({'num_speculative_tokens': n})}' (with your draft model)"
    if backend == SGLANG:
        return (
            f"SGLang {at}: --speculative-num-steps {n} --speculative-eagle-topk 1 "
            f"--speculative-num-draft-tokens {n + 1}"
        )
    return f"llama-server {at}: --spec-draft-n-max {n} (older builds: --draft-max {n})"


def _ngram(backend: str | None, at: str) -> str:
    if backend == VLLM:
        config = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
        return f"vLLM {at}: --speculative-config '{json.dumps(config)}'"
    if backend == SGLANG:
        return f"SGLang {at}: --speculative-algorithm NGRAM"
    return f"llama-server {at}: --spec-type ngram-simple (and no -md)"
