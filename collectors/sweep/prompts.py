"""Built-in prompt sets, after the notes: note 25's power-supply prompt (docs/note25.md), and code,
prose and edit (seed 001, docs/draft-strategies.md)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError

_EDIT_INPUT = """def summarize(rows, key, limit=None):
    totals = {}
    for row in rows:
        name = row[key]
        totals[name] = totals.get(name, 0) + row["value"]
    ordered = sorted(totals.items(), key=lambda item: item[1], reverse=True)
    if limit is not None:
        ordered = ordered[:limit]
    return ordered


def load(path):
    with open(path) as handle:
        return [parse(line) for line in handle if line.strip()]


def parse(line):
    name, value = line.split(",")
    return {"name": name.strip(), "value": float(value)}
"""

BUILT_IN: dict[str, tuple[str, ...]] = {
    # note 25's main table: a 512-token answer to the power-supply prompt, every request alike
    "power": (
        "Explain how a computer power supply converts mains electricity into the stable voltages a "
        "computer needs, and why it draws more power from the wall as the load on it grows.",
    ),
    # seed 001: write new code (drafting pays with a short draft model)
    "code": (
        "Write a Python function that parses a CSV file of timestamps and power readings in watts and "
        "returns the total energy in joules, using the trapezoid rule. Include type hints and a docstring.",
        "Write a Python class implementing a least-recently-used cache with get and put methods, and a "
        "short test for it.",
    ),
    # seed 001: open-ended prose (acceptance is low; long drafts cost energy)
    "prose": (
        "Write a short story about a lighthouse keeper who discovers that the lamp has started to "
        "answer back.",
        "Describe a walk through a city market early on a winter morning, in vivid detail.",
    ),
    # seed 001: edits that repeat most of the input (acceptance near 100 %)
    "edit": (
        "Rewrite the following Python code with type hints on every function, and change nothing "
        "else:\n\n" + _EDIT_INPUT,
    ),
}
BUILT_IN["mixed"] = BUILT_IN["code"] + BUILT_IN["prose"] + BUILT_IN["edit"]
DEFAULT_SET = "power"


@dataclass(frozen=True, slots=True)
class PromptSet:
    """The prompts one sweep sends; request i of a batch gets prompt i mod len."""

    name: str
    prompts: tuple[str, ...]

    def for_request(self, index: int) -> str:
        return self.prompts[index % len(self.prompts)]

    @property
    def digest(self) -> str:
        return hashlib.sha256("\x00".join(self.prompts).encode()).hexdigest()[:16]


def load_prompts(spec: str) -> PromptSet:
    """A built-in set by name, or a file: JSON lines with a "prompt" key, else blank-line separated text."""
    if spec in BUILT_IN:
        return PromptSet(spec, BUILT_IN[spec])
    path = Path(spec)
    if not path.is_file():
        raise SpectopError(
            f"no prompt set or file called {spec!r}",
            f"use one of {', '.join(sorted(BUILT_IN))}, or a file of prompts",
        )
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        try:
            prompts = tuple(json.loads(line)["prompt"] for line in text.splitlines() if line.strip())
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SpectopError(
                f'{path.name}: every line must be a JSON object with a "prompt"',
                'e.g. {"prompt": "Write a haiku"}',
            ) from exc
    else:
        prompts = tuple(p.strip() for p in text.split("\n\n") if p.strip())
    if not prompts:
        raise SpectopError(f"{path.name} holds no prompts", "separate prompts with a blank line")
    return PromptSet(path.stem, prompts)
