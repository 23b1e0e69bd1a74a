"""The import graph of a package of this project, deferred imports counted (tests of layering and cycles)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of `package` and the modules of `package` it imports anywhere in its body."""
    paths = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                deps.add(node.module)
                deps.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from pkg import mod`
        # a module's own packages load before it whatever it imports: no edge back to them
        ancestors = {name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1)}
        graph[name] = (deps & paths.keys()) - ancestors - {name}
    return graph
