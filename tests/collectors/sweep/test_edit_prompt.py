"""The built-in edit class carries a long file to rewrite, as seed 001's did (an 831-token Python
file rewritten with type hints, collectors/docs/draft-strategies.md), and the simulator still routes it to edit."""

from __future__ import annotations

import ast

from collectors.simulator.profiles import get_profile
from collectors.sweep.edit_input import EDIT_INPUT
from collectors.sweep.prompts import BUILT_IN


def test_edit_prompt_carries_a_long_untyped_python_file() -> None:
    (prompt,) = BUILT_IN["edit"]
    assert prompt.endswith(EDIT_INPUT)
    module = ast.parse(EDIT_INPUT)  # a real Python file, so the rewrite repeats real code
    functions = [n for n in ast.walk(module) if isinstance(n, ast.FunctionDef)]
    assert len(functions) >= 10
    # nothing typed yet: every function has something for the edit to change
    assert all(f.returns is None and all(a.annotation is None for a in f.args.args) for f in functions)
    # ~800 tokens: code runs 3.5 to 4.5 characters a token under the notes' BPE tokenizers
    assert 3000 <= len(EDIT_INPUT) <= 4500


def test_simulator_routes_the_long_edit_prompt_to_edit() -> None:
    profile = get_profile("note001")
    for name in ("code", "prose", "edit"):
        for prompt in BUILT_IN[name]:
            assert profile.prompt_class(prompt).name == name, prompt[:40]
    # the input alone mentions energy, power and tokens: the words of other classes' prompts
    assert profile.prompt_class(BUILT_IN["edit"][0]).name == "edit"
