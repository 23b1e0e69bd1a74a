"""collectors/ has no import cycles. Imports inside functions count: deferring an import hides a cycle
from Python's loader, it does not take the two modules' dependence on each other away."""

from __future__ import annotations

from tests.support.import_graph import import_graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_collectors_has_no_import_cycles():
    graph = import_graph("collectors")
    assert len(graph) > 20 and graph["collectors.sweep.runner"]  # the walk found modules and their imports
    assert cycles(graph) == []


def test_a_cycle_through_a_deferred_import_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def imports_between(graph: dict[str, set[str]], inside: str, outside: tuple[str, ...]) -> set[str]:
    """`module -> dependency` for each module under `inside` importing one under any of `outside`."""
    return {
        f"{name} -> {dep}"
        for name, deps in graph.items()
        if name == inside or name.startswith(inside + ".")
        for dep in deps
        if any(dep == o or dep.startswith(o + ".") for o in outside)
    }


def test_the_layers_of_collectors_hold():
    graph = import_graph("collectors")
    # a meter knows no server, and nothing of what is measured with it
    assert imports_between(graph, "collectors.meters", ("collectors.servers", "collectors.sweep")) == set()
    # the accounting core imports no server type and no meter
    assert imports_between(graph, "collectors.energy", ("collectors.servers", "collectors.meters")) == set()
    # the fake shares nothing with the measurer, or it could not catch the measurer's bugs
    measurer = tuple(
        sorted({".".join(name.split(".")[:2]) for name in graph} - {"collectors.simulator", "collectors"})
    )
    assert "collectors.sweep" in measurer and "collectors.servers" in measurer
    assert imports_between(graph, "collectors.simulator", measurer) == set()


def test_a_layer_break_is_found():
    graph = {"collectors.meters.x": {"collectors.servers.base"}, "collectors.meters.y": {"collectors.fmt"}}
    assert imports_between(graph, "collectors.meters", ("collectors.servers",)) == {
        "collectors.meters.x -> collectors.servers.base"
    }
