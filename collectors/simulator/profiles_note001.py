"""Seed 001's strategy table as data, for the simulator's `note001` profile (collectors/docs/draft-strategies.md).

Six strategies (plain, drafts of 2, 4, 8 and 16 tokens from a 0.5B model, n-gram copying) on three
kinds of text (new code, prose, an edit that repeats its input), one request at a time, Qwen2.5 7B
Q4_0 on an Apple M5 Pro, chip energy. `profiles.note001()` turns each cell into an arm's tok/s and
chip W at one request (W = tok/s × mJ/token / 1000, so mJ/token is the table's exactly) and borrows
note 25's batch shape beyond it, as the `classes` profile does.

Pitfalls handled: the note gives no acceptance where nothing was drafted (plain, and n-gram on prose,
which found nothing to copy): that arm drafts nothing here either, so a sweep shows no acceptance
rather than 0 %; a draft arm's drafts are its full length (llama-speculative-simple, no confidence
cut-off), n-gram's are as long as the copy it finds.
"""

from __future__ import annotations

ARMS: tuple[str, ...] = ("plain", "draft-2", "draft-4", "draft-8", "draft-16", "ngram")
CLASSES: tuple[str, ...] = ("edit", "code", "prose")  # routing order: an edit prompt also names code
KEYWORDS: dict[str, tuple[str, ...]] = {
    "edit": ("rewrite", "refactor", "edit", "type hints"),
    "code": ("code", "def ", "function", "python", "implement", "class "),
    "prose": (),  # everything else
}
# an edit carries the text it rewrites (the note's edit input is ~800 tokens): a short prompt is not one
MIN_CHARS: dict[str, int] = {"edit": 1000}

# (class, arm): tok/s, acceptance (None: nothing drafted), chip mJ/token
TABLE: dict[tuple[str, str], tuple[float, float | None, float]] = {
    ("code", "plain"): (62.0, None, 362.5),
    ("code", "draft-2"): (90.9, 0.78, 383.5),
    ("code", "draft-4"): (107.0, 0.68, 302.0),
    ("code", "draft-8"): (81.8, 0.51, 379.9),
    ("code", "draft-16"): (45.3, 0.31, 778.8),
    ("code", "ngram"): (59.7, 0.04, 390.4),
    ("prose", "plain"): (62.1, None, 360.4),
    ("prose", "draft-2"): (78.8, 0.60, 447.5),
    ("prose", "draft-4"): (81.4, 0.45, 397.7),
    ("prose", "draft-8"): (52.1, 0.28, 611.1),
    ("prose", "draft-16"): (24.6, 0.14, 1422.1),
    ("prose", "ngram"): (60.8, None, 366.9),
    ("edit", "plain"): (61.0, None, 368.0),
    ("edit", "draft-2"): (102.7, 0.98, 339.3),
    ("edit", "draft-4"): (137.8, 0.99, 234.6),
    ("edit", "draft-8"): (137.0, 0.97, 228.3),
    ("edit", "draft-16"): (116.4, 0.94, 297.9),
    ("edit", "ngram"): (290.2, 1.00, 119.5),
}

NGRAM_MAX = 8  # tokens n-gram copying proposes at most per step
NGRAM_HIT_RATE = {"code": 0.3, "edit": 1.0}  # share of steps where a copy is found and drafted


def length_probs(cls: str, arm: str) -> tuple[float, ...]:
    """P(draft length = 0 .. n_max) of one arm on one class."""
    if arm == "ngram":
        hit = NGRAM_HIT_RATE.get(cls, 0.0) if TABLE[(cls, arm)][1] is not None else 0.0
        return (1.0 - hit,) + (0.0,) * (NGRAM_MAX - 1) + (hit,)
    n_max = int(arm.removeprefix("draft-"))
    return (0.0,) * n_max + (1.0,)
