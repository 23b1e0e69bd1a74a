"""`spectop report FILE` on a recording: each request's joules, tokens per joule and energy-delay
product, the acceptance histogram over its requests, and verify steps by tokens accepted.

Truths by hand. The meter reads 7.5 W from 9 s to 15 s, then 30 W up to 25 s.
- r1 runs alone 10-14 s, 120 tokens: 7.5 W × 4 s = 30 J, 250 mJ/token, 120 / 30 = 4.00 tokens/J,
  EDP 30 J × 4 s = 120 J·s; drafted 100, accepted 75: 75 %, in the 70-80 % bin.
- r2 runs alone 20-22 s, 60 tokens: 30 W × 2 s = 60 J, 1000 mJ/token, 1.00 tokens/J, EDP 120 J·s;
  drafted 50, accepted 5: 10 %, in the 10-20 % bin (bins are closed below).
- r3 runs 30-31 s, past the meter's last reading: no joules; the server gave no drafted counts,
  so it is counted apart from the histogram.
- two polls count per-position accepted tokens: 8 and 4 over 10 steps, then 6 over 30: S1 = 14 / 40
  = 0.35, S2 = 4 / 40 = 0.10, so 65 % of steps accepted none, 25 % one, 10 % two.
"""

from __future__ import annotations

import dataclasses
import json
import re

from collectors.meters import MeterReading
from collectors.recording.writer import Recorder
from collectors.servers.snapshot import ServerSnapshot
from tests.support import synthetic
from tests.support.records import record
from tui.cli import main


def recording(tmp_path):
    path = tmp_path / "session.jsonl"
    rec = Recorder(path, server_url=synthetic.URL, meter=synthetic.METER)
    readings = [MeterReading(9.0 + k / 10, 7.5 * k / 10, 7.5) for k in range(61)]  # 9-15 s, 45 J
    readings += [MeterReading(15.0 + k / 10, 45.0 + 30.0 * k / 10, 30.0) for k in range(1, 101)]  # to 25 s
    rec.meter(readings)
    for t_s, per_position, steps in ((16.0, (8, 4), 10), (17.0, (6,), 30)):
        rec.poll(
            ServerSnapshot(
                synthetic.URL,
                "llama.cpp",
                t_s,
                "ok",
                window_s=1.0,
                window_steps=steps,
                window_per_position=per_position,
            )  # fmt: skip
        )
    rec.requests(
        [
            dataclasses.replace(record("r1", 10.0, 14.0, 120), draft_n=100, draft_n_accepted=75),
            dataclasses.replace(record("r2", 20.0, 22.0, 60), draft_n=50, draft_n_accepted=5),
            record("r3", 30.0, 31.0, 20),
        ]
    )
    rec.close()
    return path


def test_the_table_has_each_requests_joules_tokens_per_joule_and_edp(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["report", str(recording(tmp_path))]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()
            if line.startswith("│ r")}  # fmt: skip
    # columns: request source tokens drafted accepted acceptance G tok/s mJ/token J tok/J EDP ...
    assert rows["r1"][5] == "75.0 %" and rows["r1"][8:12] == ["250", "30.00", "4.00", "120.00"]
    assert rows["r2"][5] == "10.0 %" and rows["r2"][8:12] == ["1000", "60.00", "1.00", "120.00"]
    assert rows["r3"][8:12] == ["—", "—", "—", "—"]
    lines = out.splitlines()
    bins = {ln.split()[0]: ln.split()[-1] for ln in lines if re.fullmatch(r"\s*\d+-\d+ % .*", ln)}
    assert bins["70-80"] == "1" and bins["10-20"] == "1" and bins["0-10"] == "0" and bins["90-100"] == "0"
    assert "1 without the server's drafted counts, or nothing drafted" in out
    assert "verify steps by tokens accepted (40 steps, the server's counters)" in out
    shares = {ln.split()[0]: ln.split()[-1] for ln in lines if " accepted " in ln and ln.split()[0].isdigit()}
    assert shares == {"0": "65%", "1": "25%", "2": "10%"}


def test_the_json_form_carries_the_same_figures(tmp_path, capsys):
    assert main(["report", str(recording(tmp_path)), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    r1, r2, r3 = summary["requests"]
    assert [round(r1[k], 9) for k in ("energy_j", "tokens_per_j", "edp_js")] == [30.0, 4.0, 120.0]
    assert [round(r2[k], 9) for k in ("energy_j", "tokens_per_j", "edp_js")] == [60.0, 1.0, 120.0]
    assert r3["energy_j"] is None and r3["tokens_per_j"] is None and r3["e2e_s"] == 1.0
    assert summary["acceptance_histogram"]["requests"] == [0, 1, 0, 0, 0, 0, 0, 1, 0, 0]
    assert summary["acceptance_histogram"]["without_counts"] == 1
    assert summary["accepted_per_step"]["steps"] == 40
    assert [round(s, 9) for s in summary["accepted_per_step"]["share"]] == [0.65, 0.25, 0.1]
