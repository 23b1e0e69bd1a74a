"""After a tune, the exporter and the energy panel say the setting in effect and the saving so far.

Truth by hand, as in test_live.py: under note 25's schedule a server at 8 requests runs plain; the
meter draws 40 W over the ten one-second windows that end at t = 1 to 10: 400 J. Always-draft
costs (37.6 / 229.8) / (36.9 / 339.2) = 1.504 times plain there: 601.6 J, so 201.6 J (33.5 %)
saved.
"""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from collectors.export.exporter import SpectopExporter
from collectors.meters import MeterInfo, MeterReading
from collectors.tune.derive import derive_schedule
from collectors.tune.live import ScheduleTracker
from tests.support.snapshots import window_snapshot
from tests.support.tune_runs import note25_run
from tui.state import LiveState
from tui.widgets.energy_panel import EnergyPanel

RATIO_8 = (37.6 / 229.8) / (36.9 / 339.2)
METER = MeterInfo("dcgm", ("gpu0",), "GPU board", "counter", 0.1)


class ConstantSampler:
    """A meter drawing `power_w` steadily, read every 0.1 s from t = 0 to `until_s`."""

    reads_on_marks = False

    def __init__(self, power_w: float, until_s: float) -> None:
        self.meter = type("Meter", (), {"info": METER})()
        self._readings = [
            MeterReading(t / 10, power_w * t / 10, power_w) for t in range(round(until_s * 10) + 1)
        ]

    def readings(self, since_t_s: float | None = None) -> list[MeterReading]:
        return [r for r in self._readings if since_t_s is None or r.t_s > since_t_s]


def page(exporter) -> dict[str, list[tuple[dict, float]]]:
    registry = CollectorRegistry()
    registry.register(exporter)
    out: dict[str, list[tuple[dict, float]]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def polls_at_8() -> list:
    """One poll a second from t = 1 to 10, each closing a one-second window of 250 tokens."""
    return [
        window_snapshot(
            float(t), url="http://d", window_tokens=250, busy_slots_per_decode=8.0, drafting=False
        )
        for t in range(1, 11)
    ]


@pytest.fixture
def schedule(tmp_path):
    return derive_schedule(note25_run(tmp_path / "run"), draft_tokens=4)


def test_the_exporter_serves_the_schedule_and_its_saving(schedule):
    exporter = SpectopExporter(None, ConstantSampler(40.0, 10.0))
    exporter.attach_schedule(schedule)
    for snap in polls_at_8():
        exporter.update(snap)
    served = page(exporter)
    ((labels, _),) = served["spectop_schedule_info"]
    assert labels["setting"] == "K 4 at 1-3, off from 4" and labels["read_back"] == "not read back"
    assert served["spectop_schedule_draft_tokens"][0][1] == 0
    assert served["spectop_schedule_saved_joules"][0][1] == pytest.approx(400 * (RATIO_8 - 1), rel=1e-3)
    assert served["spectop_schedule_saved_ratio"][0][1] == pytest.approx(1 - 1 / RATIO_8, rel=1e-3)
    assert served["spectop_schedule_windows_off"][0][1] == 0


def test_a_shared_meter_counts_no_saving(schedule):
    sampler = ConstantSampler(40.0, 10.0)
    exporter = SpectopExporter(None, sampler)
    exporter.add_server(None, sampler)
    exporter.attach_schedule(schedule)
    assert [f.schedule for f in exporter.feeds] == [None, None]


def test_the_energy_panel_says_the_k_and_the_saving(schedule):
    state = LiveState()
    state.schedule = ScheduleTracker(schedule)
    for t in range(11):  # 40 W, polls at 8 requests every second
        state.add_reading(MeterReading(t, 40.0 * t, 40.0))
        state.add_snapshot(
            window_snapshot(
                float(t), window_s=1.0 if t else None, window_tokens=250, busy_slots_per_decode=8.0
            )
        )
    text = "\n".join(line.plain for line in EnergyPanel().lines(state.energy()))
    # the same ten windows of 40 J (the poll at t = 0 opens none)
    assert "K 0 tuned, not read back" in text
    assert f"saved {400 * (RATIO_8 - 1):,.0f} J, {100 * (1 - 1 / RATIO_8):.1f} % vs always-draft" in text
    assert "saved 202 J, 33.5 %" in text
