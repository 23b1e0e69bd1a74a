"""macmon meter on recorded `macmon pipe -i 200` lines, a fake Rust macmon, and the PyPI impostor."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from collectors.errors import MeterUnavailable
from collectors.meters.macmon import MacmonIntegrator, MacmonMeter

DATA = Path(__file__).parent / "data" / "macmon-pipe-i200.jsonl"
LINES = DATA.read_text().splitlines()


def expected_joules(lines: list[str], key: str) -> float:
    """Watts × interval per line, the interval being the gap between timestamps (0.2 s for the first)."""
    total, prev = 0.0, None
    for d in map(json.loads, lines):
        t = datetime.fromisoformat(d["timestamp"]).timestamp()
        watts = d[key] if d[key] > 0 else 0.0
        total += watts * (0.2 if prev is None else t - prev)
        prev = t
    return total


def test_integrates_each_line_over_its_own_interval():
    integ = MacmonIntegrator(0.2)
    for i, line in enumerate(LINES):
        assert integ.feed(line, arrival_s=float(i))  # arrival times are ignored when stamps exist
    assert integ.lines == len(LINES)
    assert integ.soc_j == pytest.approx(expected_joules(LINES, "all_power"), rel=1e-12)
    assert integ.system_j == pytest.approx(expected_joules(LINES, "sys_power"), rel=1e-12)
    assert integ.soc_w == json.loads(LINES[-1])["all_power"]
    # Not the nominal interval: the recorded gaps differ from 200 ms and that must show.
    nominal = 0.2 * sum(json.loads(x)["all_power"] for x in LINES)
    assert abs(integ.soc_j - nominal) > 1e-4


def test_skips_lines_that_are_not_samples():
    integ = MacmonIntegrator(0.2)
    assert not integ.feed("Error: IOReport channel missing\n", 0.0)
    assert not integ.feed('{"timestamp": "2025-02-24T20:38:15+00:00"}', 0.0)
    assert not integ.feed("\n", 0.0)
    assert integ.bad_lines == 2 and integ.soc_j == 0.0


def test_without_timestamps_uses_arrival_spacing():
    integ = MacmonIntegrator(0.2)
    integ.feed('{"all_power": 10.0, "sys_power": 0.0}', 5.0)
    integ.feed('{"all_power": 20.0, "sys_power": 0.0}', 5.25)
    assert integ.soc_j == pytest.approx(10.0 * 0.2 + 20.0 * 0.25)
    assert integ.system_j == 0.0


def held_open(lines, release: threading.Event):
    """Like a live pipe: the lines, then nothing until released."""
    yield from (x + "\n" for x in lines)
    release.wait(5)


def test_meter_from_injected_lines():
    release = threading.Event()
    meter = MacmonMeter(lines=held_open(LINES, release), platform="linux")
    try:
        deadline = time.monotonic() + 5
        while meter.read().energy_j < expected_joules(LINES, "all_power") - 1e-9:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        r = meter.read()
        assert r.energy_j == pytest.approx(expected_joules(LINES, "all_power"))
        assert r.power_w == json.loads(LINES[-1])["all_power"]
        assert meter.system_energy_j == pytest.approx(expected_joules(LINES, "sys_power"))
        info = meter.info
        assert info.name == "macmon" and info.boundary == "SoC (CPU+GPU+ANE)"
        assert info.update_period_s == 0.2 and "pipe -i 200" in info.detail
    finally:
        release.set()
        meter.close()
    with pytest.raises(MeterUnavailable, match="stopped"):
        meter.read()


def script(path: Path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_pypi_macmon_is_recognised(tmp_path):
    # PyPI 'macmon' (a FastAPI dashboard) has start/stop/status/logs; argparse exits 2 on the rest.
    exe = script(
        tmp_path / "macmon",
        "sys.stderr.write('usage: macmon [-h] {start,stop,status,logs} ...\\n"
        "macmon: error: argument command: invalid choice: %r\\n' % sys.argv[1])\nsys.exit(2)",
    )
    with pytest.raises(MeterUnavailable) as info:
        MacmonMeter(exe, platform="darwin")
    assert "unrelated PyPI package 'macmon'" in info.value.what
    assert "pip uninstall macmon" in info.value.fix and "brew install macmon" in info.value.fix


def test_real_macmon_subprocess(tmp_path):
    lines = tmp_path / "lines.jsonl"
    lines.write_text("\n".join(LINES[:4]) + "\n")
    exe = script(
        tmp_path / "macmon",
        "if sys.argv[1:] == ['--version']:\n    print('macmon 0.8.2'); sys.exit(0)\n"
        "if sys.argv[1:] != ['pipe', '-i', '200']:\n    sys.exit(3)\n"
        f"for line in open({str(lines)!r}):\n"
        "    print(line, end='', flush=True); time.sleep(0.02)\n"
        "time.sleep(60)",
    )
    meter = MacmonMeter(exe, platform="darwin")
    try:
        want = expected_joules(LINES[:4], "all_power")
        deadline = time.monotonic() + 5
        while meter.read().energy_j < want - 1e-9:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert meter.read().energy_j == pytest.approx(want)
    finally:
        meter.close()
    assert meter._proc is not None and meter._proc.poll() is not None  # the child is gone


def test_macmon_that_dies_reports_why(tmp_path):
    exe = script(
        tmp_path / "macmon",
        "if sys.argv[1:] == ['--version']:\n    print('macmon 0.8.2'); sys.exit(0)\n"
        "sys.stderr.write('Error: failed to open IOReport\\n'); sys.exit(1)",
    )
    with pytest.raises(MeterUnavailable, match="exited with code 1: Error: failed to open IOReport"):
        MacmonMeter(exe, platform="darwin", first_line_timeout_s=5)


def test_not_macos_and_not_installed(tmp_path):
    with pytest.raises(MeterUnavailable, match="not macOS"):
        MacmonMeter(platform="linux")
    with pytest.raises(MeterUnavailable, match="not installed") as info:
        MacmonMeter(str(tmp_path / "no-such-macmon"), platform="darwin")
    assert "brew install macmon" in info.value.fix
