"""`spectop probe` takes its own share of the device's energy where the server counted its tokens,
and says its energy was shared by the same rule as the Requests tab's `*` where it did not."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json

import pytest

from collectors.meters.sampler import WindowEnergy
from collectors.servers.snapshot import ServerSnapshot
from tests.support import synthetic
from tests.support.records import record as make_record
from tui.commands import probe


class FixedSampler:
    """A meter that read 6 J over any window."""

    meter = type("Meter", (), {"info": synthetic.METER})()

    def mark(self) -> None:  # a fixed meter: nothing to read at the window's ends
        return None

    def energy_between(self, t0_s: float, t1_s: float, wait_s: float = 0.0) -> WindowEnergy:
        return WindowEnergy(6.0, t0_s, t1_s, 3, True, False, "counter", 0.1)


@pytest.mark.parametrize(("busy_max", "shared"), [(1, False), (2, True), (None, False)])
def test_probe_energy_is_shared_when_the_server_ran_more_than_the_probe(
    busy_max, shared, monkeypatch, capsys
):
    record = dataclasses.replace(synthetic.record(), concurrency_max=busy_max)

    async def send(args: argparse.Namespace, mark=None):
        return record, []  # no poll counted the server's tokens

    monkeypatch.setattr(probe, "send", send)
    monkeypatch.setattr(probe, "sampling", lambda spec: contextlib.nullcontext(FixedSampler()))
    args = argparse.Namespace(meter="dcgm", json=True)
    assert probe.run(args) == 0
    assert json.loads(capsys.readouterr().out)["energy"]["shared_with_other_requests"] is shared
    assert probe.run(argparse.Namespace(meter="dcgm", json=False)) == 0
    assert ("other requests ran meanwhile" in capsys.readouterr().out) is shared


class BoardSampler:
    """The issue's board: 37.6 W over any window."""

    meter = type("Meter", (), {"info": synthetic.METER})()

    def mark(self) -> None:  # a fixed meter: nothing to read at the window's ends
        return None

    def energy_between(self, t0_s: float, t1_s: float, wait_s: float = 0.0) -> WindowEnergy:
        return WindowEnergy(37.6 * (t1_s - t0_s), t0_s, t1_s, 40, True, False, "counter", 0.1)


def sixteen_slots() -> list[ServerSnapshot]:
    """Polls a second apart: 15 other slots make 300 tokens a second, the probe 20 more while it runs."""
    counts = {9.0: 300, 10.0: 300, 11.0: 320, 12.0: 320, 13.0: 320, 14.0: 320, 15.0: 300}
    polls = [ServerSnapshot(synthetic.URL, "llama.cpp", 8.0, "ok")]
    for t_s, tokens in counts.items():
        polls.append(
            ServerSnapshot(synthetic.URL, "llama.cpp", t_s, "ok", window_s=1.0, window_tokens=tokens)
        )
    return polls


def test_a_probe_beside_fifteen_busy_slots_reads_its_sixteenth(monkeypatch, capsys):
    # 10-14 s, 80 tokens (20 a second); 37.6 W over 4 s is 150.4 J, 1880 mJ/token for the whole
    # board. The server made 4 × 300 = 1200 tokens for others meanwhile: the probe's share is
    # 80 / 1280 = 1/16, 9.4 J, 117.5 mJ/token.
    probe_record = make_record("r1", 10.0, 14.0, 80, concurrency_max=16)

    async def send(args: argparse.Namespace, mark=None):
        return probe_record, sixteen_slots()

    monkeypatch.setattr(probe, "send", send)
    monkeypatch.setattr(probe, "sampling", lambda spec: contextlib.nullcontext(BoardSampler()))
    assert probe.run(argparse.Namespace(meter="dcgm", json=True)) == 0
    energy = json.loads(capsys.readouterr().out)["energy"]
    assert energy["mj_per_token"] == pytest.approx(117.5)
    assert energy["device_energy_j"] == pytest.approx(150.4) and energy["energy_j"] == pytest.approx(9.4)
    assert energy["own_share"] == pytest.approx(1 / 16) and energy["unseen_tokens"] == 1200
    assert energy["shared_with_other_requests"] is True
    assert probe.run(argparse.Namespace(meter="dcgm", json=False)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split() == ["mJ/token", "118"] for line in lines), lines
    assert any("1,200 tokens for other requests meanwhile" in line for line in lines)
    assert not any("the energy is the whole device's" in line for line in lines)
