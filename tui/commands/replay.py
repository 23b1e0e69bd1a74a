"""`spectop replay FILE [--speed X]`: a recording (`--record FILE`) played back in the dashboard.

Pitfalls handled: a file that is not a recording, or one with lines torn or corrupt, stops with or
says one line naming the file, never a traceback; nothing is opened besides the file (no server,
no meter), so a recording attached to a bug report replays anywhere. Textual loads only when the
replay starts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from collectors.errors import SpectopError
from collectors.fmt import printable
from collectors.recording.reader import read_recording
from tui.commands import _common as opts

NAME = "replay"
HELP = "play a recording (--record FILE) back in the dashboard"
DESCRIPTION = (
    "Play a recording made with --record back in the dashboard, as it happened: space pauses, "
    "←/→ seek 5 s, +/- change the speed."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recording", type=Path, metavar="FILE", help="a file written by --record")
    parser.add_argument(
        "--speed",
        type=opts.seconds("--speed", 0.0, 64.0, 4.0, above_low=True, unit="a factor"),
        default=1.0,
        metavar="X",
        help="play X times faster than it happened (default 1)",
    )


def run(args: argparse.Namespace) -> int:
    recording = read_recording(args.recording)
    if not recording.entries:
        raise SpectopError(
            f"{args.recording} holds no polls, readings or requests", "record a longer session"
        )
    if recording.skipped:
        more = f" and {len(recording.skipped) - 1} more" if len(recording.skipped) > 1 else ""
        print(f"spectop replay: skipped {printable(recording.skipped[0])}{more}", file=sys.stderr)
    from tui.replay import ReplayApp  # Textual loads only for the dashboard

    app = ReplayApp(recording, speed=args.speed)
    app.run()
    return app.return_code or 0
