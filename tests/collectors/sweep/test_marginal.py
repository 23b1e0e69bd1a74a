"""Eq. 5's marginal-width advice, on the review's worked numbers (seed 003) and a hand-made sweep."""

from __future__ import annotations

import pytest

from collectors.errors import SpectopError
from collectors.sweep.marginal import (
    expected_advance,
    geometric_survival,
    live_width_advice,
    widening_pays,
    widening_threshold,
    width_advice,
    width_step,
)


def test_review_worked_numbers_p07_k6() -> None:
    # the review: p = 0.7, k = 6: S_7 = 0.08235, G_6 = 3.0588, threshold about 2.69 %
    survival = geometric_survival(0.7, 7)
    assert survival[6] == pytest.approx(0.08235, abs=5e-6)
    g6 = expected_advance(survival[:6])
    assert g6 == pytest.approx(3.0588, abs=5e-5)
    assert widening_threshold(survival[6], g6) == pytest.approx(0.0269, abs=5e-5)
    # the seventh proposal pays at a 2.6 % rise in round energy, not at 2.8 %
    assert widening_pays(0.026, survival[6], g6)
    assert not widening_pays(0.028, survival[6], g6)


def test_review_fifteen_drafts_advance() -> None:
    # the review: six drafts about 3.06 tokens, fifteen about 3.32 (Eq. 2's closed form)
    assert expected_advance(geometric_survival(0.7, 15)) == pytest.approx((1 - 0.7**16) / 0.3)
    assert expected_advance(geometric_survival(0.7, 15)) == pytest.approx(3.32, abs=0.005)


def test_sentence_from_a_draft_length_sweep() -> None:
    # by hand: draft-4 at 100 mJ/token and G 3.00 is 300 mJ a round; draft-8 at 105.48 mJ/token and
    # G 3.11 is 328.04 mJ a round: 9.35 % more, for 0.11 tokens (3.7 % of G): keep 4
    step = width_step(4, 8, (100.0, 3.00), (105.48, 3.11))
    assert step.energy_rise == pytest.approx(0.0935, abs=1e-4)
    assert step.added_advance == pytest.approx(0.11)
    assert not step.pays
    assert step.sentence == "draft-max 4 → 8 costs 9 % more per round and adds 0.11 tokens: keep 4"


def test_widening_that_pays_keeps_the_wider_length() -> None:
    # 2 → 4: 200 mJ/token at G 2.5 (500 a round) to 150 mJ/token at G 3.6 (540 a round): 8 % more
    # per round for 1.1 tokens (44 % of G): pays
    step = width_step(2, 4, (200.0, 2.5), (150.0, 3.6))
    assert step.pays
    assert step.sentence.endswith("keep 4")


def test_advice_skips_unknown_lengths_and_walks_neighbours() -> None:
    steps = width_advice({2: (200.0, 2.5), 4: (150.0, 3.6), 8: (None, 3.8), 16: (400.0, 3.9)})
    assert [(s.narrow, s.wide) for s in steps] == [(2, 4), (4, 16)]
    assert [s.pays for s in steps] == [True, False]


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(SpectopError):
        expected_advance([1.2])
    with pytest.raises(SpectopError):
        widening_threshold(0.1, 0.5)


def test_live_advice_from_sweep_round_energy_and_live_survival() -> None:
    # the server drafts 8 now: S_1..S_8 live; G_4 = 1 + 0.7 + 0.5 + 0.35 + 0.25 = 2.8, and
    # positions 5..8 add 0.05 + 0.03 + 0.02 + 0.01 = 0.11 tokens: may cost 0.11 / 2.8 = 3.93 %
    survival = [0.7, 0.5, 0.35, 0.25, 0.05, 0.03, 0.02, 0.01]
    (step,) = live_width_advice({4: 1000.0, 8: 1090.0}, survival)
    assert abs(step.threshold - 0.11 / 2.8) < 1e-12 and abs(step.energy_rise - 0.09) < 1e-12
    assert step.sentence == "draft-max 4 → 8 costs 9 % more per round and adds 0.11 tokens: keep 4"
    # the same round energies with a survival that holds up: 4 → 8 adds 1.2 tokens on G_4 = 2.8
    (step,) = live_width_advice({4: 1000.0, 8: 1090.0}, [0.7, 0.5, 0.35, 0.25, 0.4, 0.3, 0.3, 0.2])
    assert step.pays and step.sentence.endswith("adds 1.20 tokens: keep 8")


def test_live_advice_on_the_review_numbers() -> None:
    # p = 0.7: widening 6 → 7 may cost S_7 / G_6 = 0.08235 / 3.0588 = 2.69 % more per round
    survival = geometric_survival(0.7, 7)
    assert live_width_advice({6: 1000.0, 7: 1026.0}, survival)[0].pays
    assert not live_width_advice({6: 1000.0, 7: 1028.0}, survival)[0].pays


def test_live_advice_stops_where_the_server_stops_drafting() -> None:
    # the server drafts 4 positions: S_5..S_8 were never observed, so 4 → 8 is not advised
    survival = [0.7, 0.5, 0.35, 0.25]
    steps = live_width_advice({2: 900.0, 4: 1000.0, 8: 1090.0}, survival)
    assert [(s.narrow, s.wide) for s in steps] == [(2, 4)]
    assert live_width_advice({4: 1000.0, 8: 1090.0}, []) == []
