"""Outside collectors/servers/ and the simulator, no source file names a server backend.

A server's knowledge lives in its dialect's package (collectors/servers/<name>/); the client,
stream reader, launcher, sweep and commands ask the registry. "Names" means code: identifiers,
imported modules and string literals, docstrings and comments aside (they may cite a server's
behaviour as an example). The exceptions are listed here, each with why; a file on the list that
no longer names a backend fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from collectors.http import NOT_A_SERVER
from collectors.servers import registry

ROOT = Path(__file__).resolve().parents[1]
BACKEND = re.compile(r"llama|vllm|sglang", re.IGNORECASE)
OWNERS = ("collectors/servers/", "collectors/simulator/")  # the dialects, and the independent fake
ALLOWED = {
    # the CLI's help text
    "tui/commands/_common.py": "help text of --server and --server-log",
    "tui/commands/probe.py": "help text of --route",
    "tui/commands/watch.py": "the command's description",
    # the demo: simulated and real servers of named kinds, and its screenshots
    "tui/commands/demo.py": "the demo: --backend, --llama and their help",
    "tui/commands/_demo_live.py": "the demo: which simulated server speaks OpenAI",
    "tui/commands/_demo_arms.py": "the demo: its scheduled arms' help names the engines whose flags they take",
    "tui/commands/_demo_tune.py": "the demo: --tune runs on the simulated engines that can express a schedule",
    "tui/demo_llama.py": "the demo on real llama-servers",
    "tui/screenshots.py": "the demo's screenshots of simulated servers",
    "tui/screenshot_tune.py": "the demo's screenshot of the simulated vLLM server started with its schedule",
    # not yet behind the registry (collectors/docs/servers.md, "What a dialect owns")
    "collectors/http.py": "NOT_A_SERVER lists the servers spectop reads; servers/ imports http.py, so it "
    "cannot ask the registry (test_not_a_server_names_every_dialect keeps the two in step)",
    "collectors/export/series.py": "the exporter's HELP text says which engines report a series",
}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _names(node: ast.AST, docstrings: set[int]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg or ""]
    return []


def backend_names(path: Path) -> list[str]:
    """`line: text` for each identifier or string literal in `path` that names a backend."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    return [
        f"{getattr(node, 'lineno', '?')}: {name[:60]}"
        for node in ast.walk(tree)
        for name in _names(node, docstrings)
        if BACKEND.search(name)
    ]


def sources() -> list[str]:
    paths = [p for package in ("collectors", "tui") for p in (ROOT / package).rglob("*.py")]
    return sorted(str(p.relative_to(ROOT)) for p in paths if not str(p.relative_to(ROOT)).startswith(OWNERS))


def test_no_source_outside_the_dialects_names_a_backend():
    found = {
        path: names for path in sources() if path not in ALLOWED and (names := backend_names(ROOT / path))
    }
    assert found == {}


def test_every_allowed_file_still_needs_its_exception():
    assert set(ALLOWED) <= set(sources())
    assert [path for path in ALLOWED if not backend_names(ROOT / path)] == []


def test_a_backend_named_in_code_is_found_and_one_in_a_docstring_is_not(tmp_path):
    source = tmp_path / "x.py"
    source.write_text('"""Reads vLLM."""\n\nimport collectors.servers.vllm\nBACKEND = "sglang"\n# llama\n')
    assert backend_names(source) == ["3: collectors.servers.vllm", "4: sglang"]


def test_not_a_server_names_every_dialect():
    assert all(dialect.display_name in NOT_A_SERVER for dialect in registry.DIALECTS)
