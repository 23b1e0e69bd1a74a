"""`spectop probe` says its energy was shared by the same rule as the Requests tab's `*`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json

import pytest

from collectors.meters.sampler import WindowEnergy
from tests.support import synthetic
from tui.commands import probe


class FixedSampler:
    """A meter that read 6 J over any window."""

    meter = type("Meter", (), {"info": synthetic.METER})()

    def energy_between(self, t0_s: float, t1_s: float, wait_s: float = 0.0) -> WindowEnergy:
        return WindowEnergy(6.0, t0_s, t1_s, 3, True, False, "counter", 0.1)


@pytest.mark.parametrize(("busy_max", "shared"), [(1, False), (2, True), (None, False)])
def test_probe_energy_is_shared_when_the_server_ran_more_than_the_probe(
    busy_max, shared, monkeypatch, capsys
):
    record = dataclasses.replace(synthetic.record(), concurrency_max=busy_max)

    async def send(args: argparse.Namespace):
        return record

    monkeypatch.setattr(probe, "send", send)
    monkeypatch.setattr(probe, "sampling", lambda spec: contextlib.nullcontext(FixedSampler()))
    args = argparse.Namespace(meter="dcgm", json=True)
    assert probe.run(args) == 0
    assert json.loads(capsys.readouterr().out)["energy"]["shared_with_other_requests"] is shared
    assert probe.run(argparse.Namespace(meter="dcgm", json=False)) == 0
    assert ("other requests ran meanwhile" in capsys.readouterr().out) is shared
