"""vLLM V0 (0.6.6): no window spec figure from counters that add up running totals
(tests/support/vllm_v0_pages.py cites the source lines).

Worked by hand, k = 3, 100 sequence-steps per 5 s: the first two 5 s spans drafted 300 and accepted
150 each, the third drafted 300 and accepted 60. The sampler's running totals at the three
collections: drafted 300, 600, 900; accepted 150, 300, 360; emitted 220, 440, 600. The counters
(sums of those): drafted 1800, accepted 810. Polls at t = 12 s (after two collections) and t = 17 s
(after three): the counters grew by 900 drafted and 360 accepted, while the span drafted 300 and
accepted 60 (acceptance 0.2); V1's reading would say 900 / 360 / 0.4. The acceptance gauge is
360 / 900 = 0.4 since start. `generation_tokens_total` grew by 100 (one per sequence per step)
over 5 s: at least 20 tokens/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors import promtext
from collectors.servers import base
from collectors.servers.vllm import collector as vllm
from collectors.servers.vllm import v0 as vllm_v0
from tests.support.vllm_v0_pages import V0Sampler, V0State, v0_page

URL = "http://127.0.0.1:8000"
SPANS = (V0Sampler(300, 150, 220), V0Sampler(600, 300, 440), V0Sampler(900, 360, 600))


def poll(path: Path, t_s: float, state: V0State) -> vllm.RawPoll:
    return vllm.RawPoll(t_s, metrics=promtext.parse(v0_page(path, state)), version="0.6.6")


@pytest.fixture
def polls(tmp_path: Path) -> tuple[vllm.RawPoll, vllm.RawPoll]:
    before = poll(tmp_path / "a", 12.0, V0State(SPANS[:2], generated=240, steps=240))
    after = poll(tmp_path / "b", 17.0, V0State(SPANS, generated=340, steps=340))
    return before, after


def test_v0_is_told_by_its_own_series(polls):
    before, after = polls
    assert "_created" not in str(after.metrics) and vllm_v0.is_v0(after.metrics)
    assert vllm_v0.drafts_v0(after.metrics) and vllm.stats_on(after)


def test_no_window_count_from_sums_of_running_totals(polls):
    snap = vllm.derive(*polls, URL)
    assert snap.drafting is True and snap.window_s == 5.0
    assert (snap.window_drafted, snap.window_accepted, snap.window_steps) == (None, None, None)
    assert snap.acceptance is None and snap.mean_advance is None and snap.busy_slots_per_decode is None
    assert snap.drafted_total is None and snap.accepted_total is None and snap.tokens_predicted_total is None


def test_lifetime_acceptance_is_the_gauge_and_tokens_are_a_lower_bound(polls):
    snap = vllm.derive(*polls, URL)
    assert snap.acceptance_lifetime == pytest.approx(360 / 900)
    assert snap.live_tok_s == pytest.approx(100 / 5) and snap.live_tok_s_exact is False
    assert snap.slots_busy == 4


def test_the_sweep_gets_no_counts_from_v0(polls):
    window = base.window_delta(vllm.counters(polls[0]), vllm.counters(polls[1]))
    assert (window.tokens, window.drafted, window.accepted, window.steps) == (None, None, None, None)
