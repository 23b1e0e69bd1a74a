"""A client measuring B concurrent streamed requests gets note 25's table (docs/note25.md) from the
simulator.

Window = first send to last completion; tokens from the server's timings; energy from the DCGM
counter over the window. `speedup` multiplies tok/s and W alike, so both are divided by it and
mJ/token is compared as measured. Each point may be measured twice (a shared CI machine can stall
a window); a systematic error fails both.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from collectors.simulator import NOTE25_TABLE, Simulator
from collectors.simulator.profiles import NOTE25_ACCEPTANCE_RANGE, TableRow
from tests.support.simulator_clients import BatchResult, Meter, run_batch

SPEEDUP = 4.0
N_TOKENS = 128
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def measured() -> Iterator[dict[tuple[str, int], BatchResult]]:
    with Simulator(seed=0, speedup=SPEEDUP) as sim:
        meter = Meter(sim.meter_url)
        run_batch(sim.draft_url, meter, 1, 8)  # warm-up
        results: dict[tuple[str, int], BatchResult] = {}
        for row in NOTE25_TABLE:
            for arm, url in (("plain", sim.plain_url), ("draft", sim.draft_url)):
                result = run_batch(url, meter, row.requests, N_TOKENS)
                if _worst_error(arm, row, result) > TOLERANCE:
                    result = run_batch(url, meter, row.requests, N_TOKENS)
                results[(arm, row.requests)] = result
        meter.close()
        yield results


def _figures(result: BatchResult) -> tuple[float, float, float]:
    tok_s = result.tokens / result.window_s / SPEEDUP
    power_w = result.energy_mj / result.window_s / 1000 / SPEEDUP
    return tok_s, power_w, result.energy_mj / result.tokens


def _expected(arm: str, row: TableRow) -> tuple[float, float, float]:
    if arm == "plain":
        return row.plain_tok_s, row.plain_power_w, row.plain_power_w / row.plain_tok_s * 1000
    return row.draft_tok_s, row.draft_power_w, row.draft_power_w / row.draft_tok_s * 1000


def _worst_error(arm: str, row: TableRow, result: BatchResult) -> float:
    return max(abs(m / e - 1) for m, e in zip(_figures(result), _expected(arm, row)))


@pytest.mark.parametrize("arm", ["plain", "draft"])
@pytest.mark.parametrize("row", NOTE25_TABLE, ids=lambda r: f"B{r.requests}")
def test_windowed_figures_match_note25(measured: dict, arm: str, row: TableRow) -> None:
    result = measured[(arm, row.requests)]
    assert result.tokens == row.requests * N_TOKENS
    tok_s, power_w, mj = _figures(result)
    want_tok_s, want_w, want_mj = _expected(arm, row)
    assert tok_s == pytest.approx(want_tok_s, rel=TOLERANCE)
    assert power_w == pytest.approx(want_w, rel=TOLERANCE)
    assert mj == pytest.approx(want_mj, rel=TOLERANCE)
    assert mj == pytest.approx(
        row.plain_mj_per_token if arm == "plain" else row.draft_mj_per_token, rel=TOLERANCE
    )


def test_acceptance_and_crossover(measured: dict) -> None:
    for row in NOTE25_TABLE:
        draft = measured[("draft", row.requests)]
        assert NOTE25_ACCEPTANCE_RANGE[0] <= draft.accepted / draft.drafted <= NOTE25_ACCEPTANCE_RANGE[1]
        assert measured[("plain", row.requests)].drafted == 0

    def energy_ratio(batch: int) -> float:
        return _figures(measured[("draft", batch)])[2] / _figures(measured[("plain", batch)])[2]

    assert energy_ratio(2) < 1 < energy_ratio(4)  # drafting saves at two requests, costs from four
    assert energy_ratio(8) > energy_ratio(4)
