"""The energy ledger written from a thread of its own, for a caller that must not block (the dashboard's
UI thread): `add` queues the windows and returns at once; the thread writes them in order.

Pitfalls handled: `close` writes what is queued before it closes the file (the windows of the last
poll are not dropped on a clean exit); a write that fails (disk full, a locked file) is kept as
`problem` and the thread goes on, so the dashboard is never stopped by its ledger.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from collectors.ledgerdb.store import EnergyStore, Window

CLOSE_WAIT_S = 10.0  # the longest `close` waits for queued windows (SQLite's busy timeout is 5 s)


class BackgroundStore:
    """An EnergyStore's `add`, done on a daemon thread; the store is used by that thread only after this."""

    def __init__(self, store: EnergyStore) -> None:
        self.store = store
        self.problem: str | None = None  # the last write's failure, if any
        self._queue: queue.SimpleQueue[Sequence[Window] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="energy-ledger", daemon=True)
        self._thread.start()

    @property
    def path(self) -> Path:
        return self.store.path

    def add(self, windows: Sequence[Window]) -> int:
        """Queue the windows; returns how many were queued (the store decides later which are new)."""
        if windows:
            self._queue.put(list(windows))
        return len(windows)

    def _write(self) -> None:
        while (windows := self._queue.get()) is not None:
            try:
                self.store.add(windows)
            except sqlite3.Error as exc:
                self.problem = f"energy ledger {self.store.path}: {exc}"

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(CLOSE_WAIT_S)
        if not self._thread.is_alive():
            self.store.close()
