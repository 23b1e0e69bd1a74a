"""`spectop doctor` on this machine: says what is missing and falls back to the labelled estimate."""

from __future__ import annotations

import json

import pytest

from tests.support.meter_fakes import this_machine_has_a_meter
from tui.cli import main

pytestmark = pytest.mark.skipif(this_machine_has_a_meter(), reason="this machine has a GPU, RAPL or is a Mac")


def test_doctor_text(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "[FAIL] meter nvml: no NVIDIA driver" in out
    assert "[FAIL] meter rapl: no RAPL powercap interface" in out
    assert "[FAIL] meter macmon: macmon reads Apple silicon power, and this is not macOS" in out
    assert "[ok  ] meter estimate *" in out
    assert "using meter: estimate (an ESTIMATE" in out
    assert "fix: " in out and "Traceback" not in out


def test_doctor_json_with_a_dead_server(capsys):
    assert main(["doctor", "--json", "--server", "http://127.0.0.1:9"]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["meter"] == "estimate" and body["ok"] is False
    server = [c for c in body["checks"] if c["kind"] == "server"]
    assert server and server[0]["status"] == "failed" and server[0]["fix"]


def test_doctor_named_meter_and_bad_spec(capsys):
    assert main(["doctor", "--meter", "rapl"]) == 1
    out = capsys.readouterr().out
    assert "no RAPL" in out and "no power meter works here" in out
    assert main(["doctor", "--meter", "bogus"]) == 1
    assert "unknown meter 'bogus'" in capsys.readouterr().out
