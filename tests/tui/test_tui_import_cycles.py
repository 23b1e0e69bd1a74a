"""tui/ has no import cycles, deferred imports counted: deferring an import hides a cycle from Python's
loader, it does not take the two modules' dependence on each other away (as tests/test_import_cycles.py
holds for collectors/)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tui_imports() -> dict[str, set[str]]:
    """Each module of tui/ and the modules of tui/ it imports anywhere in its body."""
    names = {}
    for path in (ROOT / "tui").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                deps.add(node.module)
                deps.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from pkg import mod`
        # a module's own packages load before it whatever it imports: no edge back to them
        ancestors = {name.rsplit(".", n)[0] for n in range(1, name.count(".") + 1)}
        graph[name] = (deps & names.keys()) - ancestors - {name}
    return graph


def test_tui_has_no_import_cycles():
    graph = tui_imports()
    assert len(graph) > 20 and graph["tui.app"]  # the walk found modules and their imports
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the modules of a cycle


def test_a_cycle_through_a_deferred_import_is_found():
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}).prepare()


def test_the_app_and_its_workers_take_nothing_of_the_sweep_from_a_widget():
    graph = tui_imports()
    for name in ("tui.app", "tui.workers"):
        assert not {dep for dep in graph[name] if dep.startswith("tui.widgets.sweep")}, name
