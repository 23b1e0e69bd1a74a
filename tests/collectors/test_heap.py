"""The watchers' heap settling (collectors/heap.py): startup's garbage collected, what stays frozen
out of every later walk, young collections rarer; and both long-running commands settle once they run."""

from __future__ import annotations

import gc
import weakref

import pytest

from collectors import heap
from collectors.launch.process import free_port


class Node:
    """An object in a reference cycle: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def restored_collector():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def tracked(obj: object) -> bool:
    """Whether a collection walks `obj` (frozen objects are in no generation get_objects lists)."""
    return any(o is obj for o in gc.get_objects())


def test_settle_frees_startups_cycles_and_freezes_what_stays(restored_collector):
    staying = Node()
    dropped = Node()
    gone = weakref.ref(dropped)
    del dropped
    assert gone() is not None and tracked(staying)  # a cycle waits for the collector
    heap.settle()
    assert gone() is None  # startup's garbage is collected before the freeze
    assert not tracked(staying)  # what stays is never walked again
    assert gc.get_threshold()[0] == heap.YOUNG_OBJECTS
    later = Node()
    freed_later = weakref.ref(later)
    del later
    gc.collect()
    assert freed_later() is None  # what is made after the settle stays collectable


def test_settle_leaves_a_higher_threshold_and_a_disabled_collector_alone(restored_collector):
    gc.set_threshold(50_000, 10, 10)
    heap.settle()
    assert gc.get_threshold() == (50_000, 10, 10)
    gc.set_threshold(0, 10, 10)
    heap.settle()
    assert gc.get_threshold() == (0, 10, 10)


def test_settle_later_runs_on_its_timer(restored_collector):
    timer = heap.settle_later(0.01)
    timer.join(5)
    assert not timer.is_alive() and gc.get_freeze_count() > 0


class Settling:
    """heap.settle_later's place: records that settling was started and whether it was cancelled."""

    def __init__(self) -> None:
        self.started = self.cancelled = False

    def __call__(self) -> Settling:
        self.started = True
        return self

    def cancel(self) -> None:
        self.cancelled = True


def test_the_dashboard_settles_while_it_runs(monkeypatch):
    from tui.commands import dashboard

    settling = Settling()
    monkeypatch.setattr(heap, "settle_later", settling)

    class App:
        return_code = 0

        def run(self) -> None:  # the app's run: settling is under way, not yet cancelled
            assert settling.started and not settling.cancelled

    assert dashboard.run_app(App()) == 0
    assert settling.cancelled  # an app that ends early does not settle a heap afterwards


def test_export_settles_while_it_serves(monkeypatch):
    from tui.cli import main
    from tui.commands import export

    settling = Settling()
    monkeypatch.setattr(heap, "settle_later", settling)
    served: list[bool] = []

    async def serve(exporter, interval_s: float) -> None:
        served.append(settling.started and not settling.cancelled)

    monkeypatch.setattr(export, "serve", serve)
    argv = ["export", "--server", "http://127.0.0.1:9", "--meter", "none"]
    assert main([*argv, "--listen", f"127.0.0.1:{free_port()}", "--no-ledger"]) == 0
    assert served == [True] and settling.cancelled
