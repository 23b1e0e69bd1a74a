"""tui/ has no import cycles, deferred imports counted: deferring an import hides a cycle from Python's
loader, it does not take the two modules' dependence on each other away (as tests/test_import_cycles.py
holds for collectors/)."""

from __future__ import annotations

import graphlib

import pytest

from tests.support.import_graph import import_graph


def tui_imports() -> dict[str, set[str]]:
    """Each module of tui/ and the modules of tui/ it imports anywhere in its body."""
    return import_graph("tui")


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
