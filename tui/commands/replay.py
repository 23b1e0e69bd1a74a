"""`spectop replay FILE [--speed X] [--ledger [PATH]] [--no-ui]`: a recording (`--record FILE`) played
back in the dashboard, and put into the energy ledger when --ledger is given.

Pitfalls handled: a file that is not a recording, or one with lines torn or corrupt, stops with or
says one line naming the file, never a traceback; nothing is opened besides the file (no server,
no meter), so a recording attached to a bug report replays anywhere. Textual loads only when the
replay starts. A replay keeps no ledger unless asked: the live session kept it already (and its
windows are refused if replayed into the same ledger). Several files (a restarted session, a
rotated FILE.1 and FILE) are imported oldest first, since the ledger refuses a window older than
the last one it holds for its server.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.recording.reader import Recording, is_recording, read_recording

if TYPE_CHECKING:
    from collectors.ledgerdb.store import EnergyStore
from tui.commands import _common as opts
from tui.commands._report_ledger import DEFAULT_PATH

NAME = "replay"
HELP = "play a recording (--record FILE) back in the dashboard, or into the energy ledger"
DESCRIPTION = (
    "Play a recording made with --record back in the dashboard, as it happened: space pauses, "
    "←/→ seek 5 s, +/- change the speed. With --ledger, its poll windows also go into the energy "
    "ledger at the hours they were recorded (spectop report --since); --no-ui puts them there "
    "without showing the dashboard, as fast as the file reads."
)
_DEFAULT = object()  # --ledger with no PATH: the default ledger


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "recording",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="a file written by --record (with --no-ui, several: a restarted session's files)",
    )
    parser.add_argument(
        "--speed",
        type=opts.seconds("--speed", 0.0, 64.0, 4.0, above_low=True, unit="a factor"),
        default=1.0,
        metavar="X",
        help="play X times faster than it happened (default 1)",
    )
    parser.add_argument(
        "--ledger",
        type=Path,
        nargs="?",
        const=_DEFAULT,
        metavar="PATH",
        help="put the replayed windows into the energy ledger PATH, at the hours they were recorded "
        f"(--ledger alone: {DEFAULT_PATH}); by default a replay keeps no ledger, since the live "
        "session kept it, and windows already in a ledger are never counted twice",
    )
    parser.add_argument(
        "--no-ui",
        action="store_true",
        help="with --ledger: import the recordings into the ledger as fast as they read, showing "
        "no dashboard, and print what was added",
    )


def run(args: argparse.Namespace) -> int:
    if args.no_ui and args.ledger is None:
        raise SpectopError(
            "--no-ui only puts a recording into the energy ledger", "add --ledger (or --ledger PATH)"
        )
    if len(args.recording) > 1 and not args.no_ui:
        raise SpectopError(
            "the dashboard replays one recording at a time", "give one FILE, or add --ledger --no-ui"
        )
    if isinstance(args.ledger, Path) and is_recording(args.ledger):
        raise SpectopError(
            f"--ledger {args.ledger} is a recording, not a ledger",
            "put --ledger after the FILEs, or give it a PATH: --ledger PATH FILE",
        )
    recordings = [_read(path) for path in args.recording]
    from collectors.ledgerdb.store import EnergyStore, default_path

    store = None
    if args.ledger is not None:
        store = EnergyStore(default_path() if args.ledger is _DEFAULT else args.ledger)
    if args.no_ui:
        assert store is not None
        with store:
            return _import(recordings, store)
    return _show(recordings[0], args.speed, store)


def _read(path: Path) -> Recording:
    recording = read_recording(path)
    if not recording.entries:
        raise SpectopError(f"{path} holds no polls, readings or requests", "record a longer session")
    if recording.skipped:
        more = f" and {len(recording.skipped) - 1} more" if len(recording.skipped) > 1 else ""
        print(f"spectop replay: {path}: skipped {printable(recording.skipped[0])}{more}", file=sys.stderr)
    return recording


def _show(recording: Recording, speed: float, store: EnergyStore | None) -> int:
    from tui.replay import ReplayApp  # Textual loads only for the dashboard

    if store is None:
        app = ReplayApp(recording, speed=speed)
        app.run()
        return app.return_code or 0
    from collectors.ledgerdb.background import BackgroundStore

    sink = BackgroundStore(store)  # the UI thread never waits on the disk
    try:
        app = ReplayApp(recording, speed=speed, ledger=sink)
        app.run()
    finally:
        sink.close()
    if sink.problem:
        print(f"spectop replay: {printable(sink.problem)}", file=sys.stderr)
    print(f"the replayed windows are in the energy ledger {store.path}: {_report_hint([recording], store)}")
    return app.return_code or 0


def _import(recordings: list[Recording], store: EnergyStore) -> int:
    from tui.replay_ledger import import_recording

    for recording in sorted(recordings, key=lambda r: r.wall0_unix_s or 0.0):
        done = import_recording(recording, store)
        print(
            f"spectop replay: {recording.path}: {done.windows:,} windows from {_when(done.first_unix_s)} "
            f"to {_when(done.last_unix_s)} local time, {done.added:,} added to the energy ledger "
            f"{store.path} ({done.windows - done.added:,} there already)"
        )
    print(f"see them with: {_report_hint(recordings, store)}")
    return 0


def _report_hint(recordings: list[Recording], store: EnergyStore) -> str:
    """The report command whose --since reaches back to the oldest recording's start."""
    oldest_unix_s = min((r.wall0_unix_s or time.time() for r in recordings), default=time.time())
    days = max(1, math.ceil((time.time() - oldest_unix_s) / 86400))
    return f"spectop report --since {days}d --ledger {store.path}"


def _when(unix_s: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(unix_s)) if unix_s is not None else "—"
