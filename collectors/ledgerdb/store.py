"""The energy ledger's SQLite store: one row per (server, hour, batch level), summed from poll windows.

Pitfalls handled: a window is counted once, even across a restart, a replay of the same stream or
two spectop processes watching one server: a server's windows are kept disjoint in wall-clock time
(a window that begins before the last one recorded for its server ends is refused), so no joule is
counted twice. Each poll's windows are written in one transaction in WAL mode, so a crash loses at
most the windows not yet committed (the last poll's, and those waiting for the meter to cover them)
and never leaves a half-added hour. The file is bounded: hours older than `keep_days` are dropped
(at most one row per server, hour and batch level; batch levels are capped at MAX_BATCH_LEVEL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from collectors.errors import SpectopError

KEEP_DAYS = 400  # a year and a month: a year's report compares like months
MAX_BATCH_LEVEL = 1024
_FIGURES = (
    "energy_j",
    "tokens",
    "drafted",
    "accepted",
    "seconds",
    "drafting_s",
    "judged_s",
    "paid_s",
    "saving_j",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hours (
    server TEXT NOT NULL,
    hour_unix_s INTEGER NOT NULL,
    batch_level INTEGER NOT NULL,
    energy_j REAL NOT NULL, tokens INTEGER NOT NULL, drafted INTEGER NOT NULL, accepted INTEGER NOT NULL,
    seconds REAL NOT NULL, drafting_s REAL NOT NULL, judged_s REAL NOT NULL, paid_s REAL NOT NULL,
    saving_j REAL NOT NULL,
    PRIMARY KEY (server, hour_unix_s, batch_level)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS last_window (server TEXT PRIMARY KEY, end_unix_ms INTEGER NOT NULL);
PRAGMA user_version = 1;
"""
_UPSERT = (
    f"INSERT INTO hours (server, hour_unix_s, batch_level, {', '.join(_FIGURES)}) "
    f"VALUES ({', '.join('?' * (3 + len(_FIGURES)))}) ON CONFLICT (server, hour_unix_s, batch_level) "
    f"DO UPDATE SET {', '.join(f'{f} = {f} + excluded.{f}' for f in _FIGURES)}"
)


@dataclass(frozen=True, slots=True)
class Window:
    """One poll window's figures, timed by the wall clock (Unix seconds)."""

    server: str
    start_unix_s: float
    end_unix_s: float
    batch_level: int  # 0: no tokens in the window (idle)
    energy_j: float
    tokens: int
    drafted: int
    accepted: int
    drafting_s: float  # the window's seconds if the server drafted in it
    judged_s: float  # the window's seconds if a sweep's curves gave a verdict on drafting
    paid_s: float  # the window's seconds if that verdict was "saves"
    saving_j: float  # what switching drafting off would have saved where it cost more (0 elsewhere)


@dataclass(frozen=True, slots=True)
class HourRow:
    """The ledger's sums for one server, hour and batch level."""

    server: str
    hour_unix_s: int
    batch_level: int
    energy_j: float
    tokens: int
    drafted: int
    accepted: int
    seconds: float
    drafting_s: float
    judged_s: float
    paid_s: float
    saving_j: float


def default_path() -> Path:
    """The ledger's file under the user's data folder (~/.local/share/spectop on Linux)."""
    return Path(platformdirs.user_data_dir("spectop", appauthor=False)) / "energy-ledger.sqlite"


def _ms(unix_s: float) -> int:
    return round(unix_s * 1000)


class EnergyStore:
    """The ledger file, opened for reading and writing (created with its folder if missing)."""

    def __init__(self, path: Path, keep_days: float = KEEP_DAYS) -> None:
        self.path, self.keep_days = path, keep_days
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")  # WAL: a commit survives a crash of spectop
            self._db.execute("PRAGMA busy_timeout = 5000")  # a second spectop writes the same file
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise SpectopError(
                f"cannot open the energy ledger {path} ({exc})", "give another --ledger PATH, or --no-ledger"
            ) from exc
        self._pruned_hour: int | None = None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EnergyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, windows: Sequence[Window]) -> int:
        """Add windows in one transaction; returns how many were new (the others overlapped)."""
        if not windows:
            return 0
        added = 0
        with self._transaction():
            for w in windows:
                row = self._db.execute(
                    "SELECT end_unix_ms FROM last_window WHERE server = ?", (w.server,)
                ).fetchone()
                if row is not None and _ms(w.start_unix_s) < row[0] - 1:  # 1 ms: float rounding
                    continue
                self._db.execute(
                    "INSERT INTO last_window VALUES (?, ?) ON CONFLICT (server) DO UPDATE SET end_unix_ms = excluded.end_unix_ms",
                    (w.server, _ms(w.end_unix_s)),
                )
                hour = int(w.end_unix_s // 3600 * 3600)
                level = min(max(w.batch_level, 0), MAX_BATCH_LEVEL)
                seconds = w.end_unix_s - w.start_unix_s
                figures = (w.energy_j, w.tokens, w.drafted, w.accepted, seconds, w.drafting_s, w.judged_s)
                self._db.execute(_UPSERT, (w.server, hour, level, *figures, w.paid_s, w.saving_j))
                added += 1
            self._prune(int(windows[-1].end_unix_s // 3600 * 3600))
        return added

    def _prune(self, hour_unix_s: int) -> None:
        if self._pruned_hour == hour_unix_s:  # once an hour is enough
            return
        self._pruned_hour = hour_unix_s
        self._db.execute("DELETE FROM hours WHERE hour_unix_s < ?", (hour_unix_s - self.keep_days * 86400,))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")  # takes the write lock now: a second writer waits, not fails
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def hours(self, since_unix_s: float, servers: Iterable[str] = ()) -> list[HourRow]:
        """The rows of the hours that end after `since_unix_s`, oldest first."""
        wanted = list(servers)
        where = "hour_unix_s + 3600 > ?" + (
            f" AND server IN ({', '.join('?' * len(wanted))})" if wanted else ""
        )
        rows = self._db.execute(
            f"SELECT server, hour_unix_s, batch_level, {', '.join(_FIGURES)} FROM hours WHERE {where} "
            "ORDER BY hour_unix_s, server, batch_level",
            (since_unix_s, *wanted),
        ).fetchall()
        return [HourRow(*row) for row in rows]
