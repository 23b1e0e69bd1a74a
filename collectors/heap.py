"""A watcher's heap: what Python's cycle collector need not walk again once startup is done.

The dashboard and `export` run for hours holding what startup made (modules, classes, widgets,
styles: about 97,000 objects in the dashboard) for as long as the process lives. CPython's
collector walks every tracked object in each full collection, and the young generation is
collected every 700 new objects. Watching a real llama-server once a second, the collector took
150 ms of the dashboard's ~900 ms of CPU a minute (measured with `gc.callbacks`): a full walk of
75 ms every 40 s, and young collections 51 times a minute.

`settle` collects what startup left, then moves what survives to the permanent generation
(`gc.freeze`: never walked again; still freed by reference counting once dropped), and lets 10,000
new objects come before a young collection. The cost, as CPython documents it: a reference cycle
among frozen objects that later becomes garbage is not collected. So it runs once, three seconds
into the run, when what exists is what stays (`settle_later`); what is made after stays
collectable. Tests never call it through the commands: their process runs many apps.
"""

from __future__ import annotations

import gc
import threading

YOUNG_OBJECTS = 10_000  # new objects between two young collections (CPython's default: 700)
SETTLE_AFTER_S = 3.0  # startup done: the first frame is drawn (0.7 s) and the first polls shown


def settle() -> None:
    """Collect startup's garbage, freeze what survives, and collect the young generation less often."""
    gc.collect()
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    if young:  # 0: collection is off (gc.disable through the threshold): leave it so
        gc.set_threshold(max(young, YOUNG_OBJECTS), older, oldest)


def settle_later(delay_s: float = SETTLE_AFTER_S) -> threading.Timer:
    """`settle` on a daemon timer thread, `delay_s` from now (the collector runs from any thread)."""
    timer = threading.Timer(delay_s, settle)
    timer.daemon = True
    timer.start()
    return timer
