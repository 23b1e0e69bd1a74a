"""Built-in prompt sets, after the notes: note 25's power-supply prompt (collectors/docs/note25.md), and code,
prose and edit (seed 001, collectors/docs/draft-strategies.md), or a file of prompts.

Pitfalls handled: a prompts file that cannot be read, is not UTF-8 text (a binary, a UTF-16 export),
is huge, or whose JSON lines hold something other than a non-empty text "prompt" stops with one
line naming the file, the line and the fix, before anything is measured; so does a prompt class
(`load_classes`, for a multi-arm sweep) that is missing or not text on a .jsonl line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError
from collectors.sweep.edit_input import EDIT_INPUT

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
    # seed 001: an edit that repeats most of its ~800-token input (acceptance near 100 %)
    "edit": (
        "Rewrite the following Python code with type hints on every function, and change nothing "
        "else:\n\n" + EDIT_INPUT,
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


MAX_FILE_BYTES = 16 * 1024 * 1024  # prompts, not a corpus: a bigger file is the wrong file


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SpectopError(
                f"{path.name} is larger than {MAX_FILE_BYTES // 2**20} MiB: not a prompts file",
                "give a file of prompts (blank-line separated, or .jsonl)",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SpectopError(
            f"cannot read {path}: {exc.strerror}", "check the path and its permissions"
        ) from exc
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark from an editor is not part of a prompt
    except UnicodeDecodeError as exc:
        raise SpectopError(
            f"{path.name} is not UTF-8 text (byte {exc.start})", "save the prompts as UTF-8 text"
        ) from exc
    if "\x00" in text:
        raise SpectopError(f"{path.name} holds NUL bytes: not a text file", "save the prompts as UTF-8 text")
    return text.replace("\r\n", "\n")  # a blank line is a blank line whatever wrote the file


def _jsonl_prompt(path: Path, number: int, line: str) -> str:
    try:
        prompt = json.loads(line)["prompt"]
    except (json.JSONDecodeError, KeyError, TypeError, IndexError, RecursionError):
        prompt = None
    if not isinstance(prompt, str) or not prompt.strip():
        raise SpectopError(
            f'{path.name} line {number}: every line must be a JSON object with a text "prompt"',
            'e.g. {"prompt": "Write a haiku"}',
        )
    return prompt


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
    text = _read_text(path)
    if path.suffix == ".jsonl":
        prompts = tuple(
            _jsonl_prompt(path, n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()
        )
    else:
        prompts = tuple(p.strip() for p in text.split("\n\n") if p.strip())
    if not prompts:
        raise SpectopError(f"{path.name} holds no prompts", "separate prompts with a blank line")
    return PromptSet(path.stem, prompts)


MAX_CLASSES = 16


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
