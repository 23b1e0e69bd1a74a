"""Deterministic text and draft outcomes for the simulated model.

Greedy output depends only on the prompt (never on the arm or the simulator seed), so a plain
and a draft arm answer the same prompt with the same tokens, as a real target model does
whether or not a draft proposes them. Draft outcomes per verify step are drawn from the
profile's draft-length distribution with a per-position acceptance solved from the target
acceptance rate, and kept within a few tokens of that rate over a request (bounded-discrepancy
sampling), so even a short request shows the profile's acceptance.
"""

from __future__ import annotations

import hashlib
import random
import re
import zlib

_WORDS = (
    "the power supply of a chip draws more current when the batch grows and each request adds work "
    "to the same pass over the weights while memory bandwidth sets the pace of every decode step so "
    "arithmetic waits for data unless a draft or another request fills the gap voltage regulator "
    "phase load line efficiency thermal headroom clock frequency cache token model server queue "
    "energy joules watts per second latency throughput verify accept reject guess draft target layer "
    "matrix vector multiply kernel launch scheduler slot prompt answer context window stream burst "
    "measure counter sensor window baseline idle active steady rise fall peak average sample rate"
).split()
_PUNCT = (",", ".", ";", ":")
VOCAB: tuple[str, ...] = tuple(f" {w}" for w in dict.fromkeys(_WORDS)) + _PUNCT + ("\n",)
_TOKEN_ID_BASE = 1000
_TOKEN_PIECE = re.compile(r"\s?[A-Za-z]+|\s?\d|\s?[^\sA-Za-z\d]|\s+")
N_VOCAB_IDS = 151_000


def _key(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:8], "big")


def tokenize(text: str) -> list[int]:
    """Token ids of `text` (BOS first): stable, about one id per word or symbol."""
    ids = [1]
    for piece in _TOKEN_PIECE.findall(text):
        ids.append(2 + zlib.crc32(piece.encode("utf-8", "replace")) % N_VOCAB_IDS)
    return ids


def natural_length(prompt: str) -> int:
    """Tokens until the model would emit end-of-sequence for this prompt (when EOS is honoured)."""
    return 300 + _key("eos", prompt) % 900


class TokenStream:
    """The greedy continuation of one prompt, token by token: (token id, text)."""

    def __init__(self, prompt: str, sample_seed: int | None = None) -> None:
        self._rng = random.Random(_key("text", prompt) if sample_seed is None else _key(prompt, sample_seed))
        self._since_stop = 0

    def next(self) -> tuple[int, str]:
        rng = self._rng
        self._since_stop += 1
        if self._since_stop > 6 and rng.random() < 0.12:
            self._since_stop = 0
            if rng.random() < 0.15:
                idx = len(VOCAB) - 1  # newline
            else:
                idx = len(VOCAB) - 1 - len(_PUNCT) + rng.randrange(len(_PUNCT))
        else:
            idx = rng.randrange(len(VOCAB) - 1 - len(_PUNCT))
        return _TOKEN_ID_BASE + idx, VOCAB[idx]


def solve_position_acceptance(length_probs: tuple[float, ...], acceptance: float) -> float:
    """Per-position accept probability p so that E[accepted] / E[drafted] = `acceptance`.

    A draft of length d has its first k tokens accepted while each next one is accepted with
    probability p (a leading run), so E[accepted | d] = p + p^2 + ... + p^d.
    """
    mean_len = sum(d * q for d, q in enumerate(length_probs))
    if mean_len <= 0:
        return 0.0

    def rate(p: float) -> float:
        return sum(q * sum(p**j for j in range(1, d + 1)) for d, q in enumerate(length_probs)) / mean_len

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if rate(mid) < acceptance:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class DraftSampler:
    """Draft length and accepted count for each verify step of one request."""

    def __init__(
        self,
        key: int,
        length_probs: tuple[float, ...],
        acceptance: float,
        bound_tokens: float = 2.0,
    ) -> None:
        self._rng = random.Random(key)
        self._cum = []
        total = 0.0
        for q in length_probs:
            total += q
            self._cum.append(total)
        self._p = solve_position_acceptance(length_probs, acceptance)
        self._target = acceptance
        self._bound = bound_tokens
        self._error = 0.0  # accepted - target * drafted, so far

    def _draw(self, cap: int) -> tuple[int, int]:
        rng = self._rng
        u = rng.random() * self._cum[-1]
        length = next(d for d, c in enumerate(self._cum) if u <= c)
        length = min(length, cap)
        accepted = 0
        while accepted < length and rng.random() < self._p:
            accepted += 1
        return length, accepted

    def next(self, cap: int) -> tuple[int, int]:
        """(drafted, accepted) for one step; drafts are at most `cap` tokens long."""
        if cap <= 0:
            return 0, 0
        best: tuple[int, int] | None = None
        best_err = float("inf")
        for _ in range(8):
            length, accepted = self._draw(cap)
            err = self._error + accepted - self._target * length
            if abs(err) <= self._bound:
                best, best_err = (length, accepted), err
                break
            if abs(err) < abs(best_err):
                best, best_err = (length, accepted), err
        assert best is not None
        self._error = best_err
        return best


def draft_key(seed: int, arm: str, prompt: str) -> int:
    """The sampler key of a request: identical prompts on one arm draft identically."""
    return _key("draft", seed, arm, prompt)
