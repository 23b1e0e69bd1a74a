"""`spectop report` on a recording keys each poll window on its requests' mean concurrency and leaves
out only the window the meter did not cover."""

from __future__ import annotations

import json

from collectors.meters import MeterReading
from collectors.recording.writer import Recorder
from collectors.servers.snapshot import ServerSnapshot
from tests.support import synthetic
from tests.support.records import record
from tui.cli import main

# 50 W throughout, read every 0.5 s from 0 to 10 s. Request a runs 1.5-4.5 s alone (60 tokens,
# 20 a second); b and c run 5-9 s together (80 tokens each). Polls every second from 1 s; the last
# at 10.33 s, 0.33 s after the meter's last reading. At the poll instants the server's busy slots
# were 1 at 2, 3, 4 s, 0 at 5 s (a ended at 4.5, b and c had not started), 2 at 6, 7, 8 s and 0 after.
WINDOWS = [  # (poll time, window s, tokens the server counted, busy slots at the poll)
    (2.0, 1.0, 10, 1),  # a from 1.5 s: 0.5 s × 20
    (3.0, 1.0, 20, 1),
    (4.0, 1.0, 20, 1),
    (5.0, 1.0, 10, 0),  # a until 4.5 s
    (6.0, 1.0, 40, 2),  # b and c, 20 a second each
    (7.0, 1.0, 40, 2),
    (8.0, 1.0, 40, 2),
    (9.0, 1.0, 40, 0),
    (10.0, 1.0, 0, 0),
    (10.33, 0.33, 0, 0),  # past the meter's last reading
]


def write_recording(path) -> None:
    rec = Recorder(path, server_url=synthetic.URL, meter=synthetic.METER)
    rec.meter([MeterReading(t / 2, 50.0 * t / 2, 50.0) for t in range(21)])
    rec.poll(ServerSnapshot(synthetic.URL, "llama.cpp", 1.0, "ok", slots_busy=0))
    for t_s, window_s, tokens, busy in WINDOWS:
        rec.poll(
            ServerSnapshot(
                synthetic.URL,
                "llama.cpp",
                t_s,
                "ok",
                window_s=window_s,
                window_tokens=tokens,
                slots_busy=busy,
            )
        )
    rec.requests([record("a", 1.5, 4.5, 60), record("b", 5.0, 9.0, 80), record("c", 5.0, 9.0, 80)])
    rec.close()


def test_levels_come_from_the_requests_spans_and_an_uncovered_window_is_left_out(tmp_path, capsys):
    path = tmp_path / "session.jsonl"
    write_recording(path)
    assert main(["report", str(path), "--format", "json"]) == 0
    levels = {row["busy_slots"]: row for row in json.loads(capsys.readouterr().out)["batch_levels"]}
    # level 1: the windows ending 2, 3, 4, 5 s (a alone while anything ran): 4 s × 50 W = 200 J over
    # 10 + 20 + 20 + 10 = 60 tokens = 3333 mJ/token. Level 2: the windows ending 6-9 s: 200 J over
    # 160 tokens = 1250 mJ/token. Level 0: the window ending 10 s, nothing ran: 50 J, no tokens.
    # The window ending 10.33 s is left out; level 0 keeps its figures.
    assert levels[1]["tokens"] == 60 and levels[1]["energy_j"] == 200.0
    assert round(levels[1]["mj_per_token"]) == 3333
    assert levels[2]["tokens"] == 160 and levels[2]["mj_per_token"] == 1250.0
    assert levels[0]["energy_j"] == 50.0 and levels[0]["tokens"] == 0 and levels[0]["windows_left_out"] == 1
    assert main(["report", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {
        cells[0]: cells[1:] for cells in (line.strip("│ ").split("│") for line in lines) if len(cells) == 5
    }
    assert [c.strip() for c in rows["1 "]] == ["4.0", "200.0", "60", "3333"], rows
    assert [c.strip() for c in rows["2 "]] == ["4.0", "200.0", "160", "1250"]
    assert any("1 poll window left out: the meter did not cover them" in line for line in lines)
