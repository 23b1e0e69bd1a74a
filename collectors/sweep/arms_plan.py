"""What a multi-arm sweep measures and in which order: every arm on every prompt class at every batch,
bracketed by plain, the order shuffled in each pass (seed 001, collectors/docs/draft-strategies.md).

Pitfalls handled: a slow drift of the machine (heat, a background job) must not line up with one
arm, so the order of (class, batch) blocks and of the arms inside each is shuffled anew in every
pass, from a seed the run keeps, so a run can be repeated in the same order; plain before and after
each block gives that block its own drift check. A prompts file's class field is checked line by
line: a missing or non-text class is one line naming the file, the line and the fix.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.prompts import BUILT_IN, PromptSet, _jsonl_prompt, _read_text, load_prompts

MAX_CLASSES = 16


@dataclass(frozen=True, slots=True)
class ArmsPlan:
    """The paired sweep's knobs (`base`), the arms besides plain, and the prompt classes."""

    base: SweepPlan
    arm_names: tuple[str, ...]
    classes: tuple[PromptSet, ...]
    seed: int = 0  # of the shuffled order

    def prompt_set(self, name: str) -> PromptSet:
        return next(c for c in self.classes if c.name == name)

    def schedule(self) -> list[PointKey]:
        """Per pass, the (class, batch) blocks in a shuffled order; in each, plain, the arms shuffled, plain."""
        rng = random.Random(self.seed)
        keys: list[PointKey] = []
        for p in range(self.base.passes):
            blocks = [(c.name, b) for c in self.classes for b in self.base.batches]
            rng.shuffle(blocks)
            for cls, batch in blocks:
                arms = list(self.arm_names)
                rng.shuffle(arms)
                keys.append(PointKey(p, batch, "plain", "before", cls))
                keys += [PointKey(p, batch, arm, "", cls) for arm in arms]
                keys.append(PointKey(p, batch, "plain", "after", cls))
        return keys


def load_classes(spec: str) -> tuple[PromptSet, ...]:
    """Prompt classes: built-in sets by name, comma-separated (`code,prose,edit`), or one file;
    a .jsonl file's lines may carry a "class" field, and then each class is a set of its own."""
    path = Path(spec)
    if spec.endswith(".jsonl") and path.is_file():
        return _jsonl_classes(path)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if len(names) > 1 and any(n not in BUILT_IN for n in names):
        unknown = next(n for n in names if n not in BUILT_IN)
        raise SpectopError(
            f"no built-in prompt set called {unknown!r}", f"use {', '.join(sorted(BUILT_IN))}, or one file"
        )
    if len(set(names)) != len(names) or len(names) > MAX_CLASSES:
        raise SpectopError(f"--prompts names a class twice, or more than {MAX_CLASSES}: {spec!r}", "")
    return tuple(load_prompts(n) for n in names) if names else (load_prompts(spec),)


def _jsonl_classes(path: Path) -> tuple[PromptSet, ...]:
    by_class: dict[str, list[str]] = {}
    for number, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        prompt = _jsonl_prompt(path, number, line)
        cls = json.loads(line).get("class", path.stem)
        if not isinstance(cls, str) or not cls.strip():
            raise SpectopError(
                f'{path.name} line {number}: "class" must be a non-empty text', 'e.g. {"class": "edit", ...}'
            )
        by_class.setdefault(cls.strip(), []).append(prompt)
    if not by_class:
        raise SpectopError(f"{path.name} holds no prompts", 'one JSON object a line, with a "prompt"')
    if len(by_class) > MAX_CLASSES:
        raise SpectopError(f"{path.name} has more than {MAX_CLASSES} classes", "split the sweep")
    return tuple(PromptSet(name, tuple(prompts)) for name, prompts in by_class.items())
