"""The simulated accelerator as dcgm-exporter shows it: labels, HELP/TYPE, an exact energy counter."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest

from collectors.simulator import Simulator
from collectors.simulator.profiles import NOTE25_PLAIN, NOTE25_TABLE
from tests.support.simulator_clients import PROMPT, Meter, families


def test_page_has_dcgm_exporter_names_help_and_labels(sim: Simulator, client: httpx.Client) -> None:
    response = client.get(sim.meter_url + "/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    fams = families(response.text)
    power = fams["DCGM_FI_DEV_POWER_USAGE"]
    energy = fams["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
    assert (power.type, power.documentation) == ("gauge", "Power draw (in W).")
    assert (energy.type, energy.documentation) == ("counter", "Total energy consumption since boot (in mJ).")
    labels = energy.samples[0].labels
    assert {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"} <= set(labels)
    assert labels["gpu"] == "0" and labels["UUID"].startswith("GPU-") and labels["device"] == "nvidia0"
    assert "M5 Pro" in labels["modelName"]
    line = next(
        x for x in response.text.splitlines() if x.startswith("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{")
    )
    assert line.rsplit(" ", 1)[1].isdigit()  # an integer count of mJ, as dcgm-exporter prints it
    assert client.get(sim.meter_url + "/nothing").status_code == 404


def _bracketed_read(meter: Meter) -> tuple[float, float, float]:
    t_before = time.monotonic()
    energy = meter.energy_mj()
    return t_before, energy, time.monotonic()


def test_energy_is_exact_at_read_time_when_idle() -> None:
    with Simulator(seed=11, speedup=1) as sim:
        meter = Meter(sim.meter_url)
        power_w = meter.power_w()
        assert power_w == pytest.approx(sim.profile.idle_w, rel=0.04)
        a0, e0, b0 = _bracketed_read(meter)
        time.sleep(0.25)
        a1, e1, b1 = _bracketed_read(meter)
        meter.close()
        # the counter moved by exactly power x time between the two reads: no collection interval
        assert power_w * (a1 - b0) * 1000 - 1 <= e1 - e0 <= power_w * (b1 - a0) * 1000 + 1


@contextlib.contextmanager
def _running(urls: list[str], n_tokens: int = 2000) -> Iterator[None]:
    """Streamed requests in flight (one per URL) until the block ends; then they are abandoned."""
    with contextlib.ExitStack() as stack:
        lines = []  # kept alive: a dropped line iterator closes its stream
        for url in urls:
            client = stack.enter_context(httpx.Client(timeout=30))
            body = {"prompt": PROMPT, "n_predict": n_tokens, "ignore_eos": True, "stream": True}
            response = stack.enter_context(client.stream("POST", url + "/completion", json=body))
            lines.append(response.iter_lines())
            next(lines[-1])
        yield


def test_energy_under_a_constant_load_is_the_calibrated_power() -> None:
    with Simulator(seed=12, speedup=4) as sim, _running([sim.plain_url, sim.plain_url]):
        # the accelerator's own readings carry the instant their energy is exact for, so the
        # interval is exact however late this thread or the engine's runs on a loaded machine
        r0 = sim.accelerator.read()
        time.sleep(0.5)
        r1 = sim.accelerator.read()
        assert sim.plain.live().busy_slots == 2 and r1.active_requests == 2
        watts = (r1.energy_mj - r0.energy_mj) / (r1.t_s - r0.t_s) / 1000 / sim.speedup
        # each step draws P(2) with 1 % noise; a hundred or more steps average it well under 3 %
        assert watts == pytest.approx(NOTE25_TABLE[1].plain_power_w, rel=0.03)


def test_two_arms_share_one_chip_by_total_active_requests() -> None:
    with Simulator(seed=13, speedup=4, noise=0.0) as sim:
        with _running([sim.plain_url, sim.plain_url, sim.draft_url, sim.draft_url]):
            assert sim.accelerator.active_requests() == 4
            # a reading is exact up to the instant every arm has decided its load, which a loaded
            # machine can hold back behind the last admission: wait until the reading has all four
            reading = sim.accelerator.read()
            for _ in range(500):
                if reading.active_requests == 4:
                    break
                time.sleep(0.01)
                reading = sim.accelerator.read()
            assert reading.active_requests == 4
            cls = sim.profile.classes[0]
            expected = (2 * cls.plain.power_w.at(4) + 2 * cls.draft.power_w.at(4)) / 4 * sim.speedup
            assert reading.power_w == pytest.approx(expected, rel=1e-6)
            live0 = sim.plain.live()
            time.sleep(0.3)
            live1 = sim.plain.live()
            # counts at step ends on the engine's schedule: a rate exact however late the threads run
            plain_tok_s = (live1.committed_tokens - live0.committed_tokens) / (live1.t_s - live0.t_s)
            # each plain request runs at its share of the 4-request rate: T(4) / 4 (no noise here)
            assert plain_tok_s / sim.speedup == pytest.approx(2 * NOTE25_PLAIN.tok_s.at(4) / 4, rel=0.01)
        deadline = time.monotonic() + 5
        while sim.accelerator.active_requests():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert sim.accelerator.read().power_w == pytest.approx(sim.profile.idle_w * sim.speedup)
