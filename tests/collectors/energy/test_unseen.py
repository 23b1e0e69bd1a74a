"""Traffic spectop did not send takes its share of the meter by the tokens the server counted."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from collectors.energy import unseen
from collectors.energy.attribution import activity, attribute_records
from tests.support.records import record

POWER_W = 37.6


@dataclass(frozen=True)
class Poll:
    """What a ServerSnapshot says of the tokens the server generated since the previous poll."""

    taken_at_s: float
    window_s: float | None
    window_tokens: int | None


def polls_of(counts: dict[float, int | None], first_s: float) -> list[Poll]:
    """A poll every second from `first_s` (no window yet), then one per `counts` entry (its end: tokens)."""
    out = [Poll(first_s, None, None)]
    for t_s, tokens in counts.items():
        out.append(Poll(t_s, 1.0, tokens))
    return out


def meter(rate_hz: int = 10, from_s: float = 8.0, to_s: float = 16.0) -> tuple[list[float], list[float]]:
    times_s = [from_s + k / rate_hz for k in range(round((to_s - from_s) * rate_hz) + 1)]
    return times_s, [POWER_W * (t - from_s) for t in times_s]


# The demo: 16 equally fast slots, 20 tokens/s each, under 37.6 W. The probe runs 10-14 s and
# commits 80 tokens (20 in each second); the 15 other slots make 300 tokens a second throughout, so the
# server counts 300 a second outside the probe and 320 while it runs.
PROBE = record("r1", 10.0, 14.0, 80, concurrency_max=16)
SIXTEEN = {9.0: 300, 10.0: 300, 11.0: 320, 12.0: 320, 13.0: 320, 14.0: 320, 15.0: 300, 16.0: 300}


@pytest.mark.parametrize("rate_hz", [1, 10, 50])
def test_a_probe_beside_fifteen_busy_slots_gets_a_sixteenth(rate_hz: int) -> None:
    # 37.6 W over 4 s is 150.4 J; the probe made 80 of the 80 + 4·300 = 1280 tokens: 1/16, 9.4 J,
    # 117.5 mJ/token. Charged the whole board it read 150.4 J / 80 = 1880 mJ/token.
    times_s, energies_j = meter(rate_hz)
    result = attribute_records([PROBE], times_s, energies_j, polls_of(SIXTEEN, 8.0))["r1"]
    assert result.mj_per_token == pytest.approx(117.5, rel=0.02)
    assert result.unseen_tokens == pytest.approx(1200)
    assert not result.shared  # the figure is its own, no `*`
    assert unseen.own_share(activity(PROBE), 80, polls_of(SIXTEEN, 8.0)) == pytest.approx(1 / 16)


def test_alone_with_a_token_of_timing_noise_a_probe_keeps_its_whole_energy() -> None:
    # the server counts a token a few ms before spectop sees it: 21, 19, 21, 19 where the probe saw
    # 20 a second; it leads by one at 11 and 13 s and gives it back by the next poll. No other
    # traffic ran, so nothing is unseen (clipped window by window it read 2 tokens; the running
    # peak of the lead, 1): 37.6 W · 4 s = 150.4 J / 80 = 1880 mJ/token.
    alone = record("r1", 10.0, 14.0, 80, concurrency_max=1)
    counts = {9.0: 0, 10.0: 0, 11.0: 21, 12.0: 19, 13.0: 21, 14.0: 19, 15.0: 0}
    result = attribute_records([alone], *meter(10), polls_of(counts, 8.0))["r1"]
    assert result.unseen_tokens == 0.0
    assert result.mj_per_token == pytest.approx(1880)


def test_a_step_the_server_counted_early_is_no_traffic_but_a_real_one_is() -> None:
    # a drafting server at 16 busy slots leads spectop by 5 tokens at the poll at 12 s and gives
    # them back: still 1200 unseen over 10-14 s, not 1205
    counts = dict(SIXTEEN)
    counts[12.0], counts[13.0] = 325, 315
    result = attribute_records([PROBE], *meter(10), polls_of(counts, 8.0))["r1"]
    assert result.unseen_tokens == pytest.approx(1200)
    assert result.mj_per_token == pytest.approx(117.5, rel=0.01)


def test_without_counts_over_the_whole_request_the_figure_is_marked_shared() -> None:
    # the poll ending at 12 s failed: the server's counts do not say what ran in 11-12 s
    broken = dict(SIXTEEN)
    broken[12.0] = None
    result = attribute_records([PROBE], *meter(10), polls_of(broken, 8.0))["r1"]
    assert result.shared and result.unseen_tokens is None
    assert unseen.own_share(activity(PROBE), 80, polls_of(broken, 8.0)) is None
    windows = unseen.unseen_windows(polls_of(broken, 8.0), [activity(PROBE)])
    assert not unseen.counts_cover(windows, 10.0, 14.0)
    assert unseen.counts_cover(windows, 12.5, 14.0)  # a chain starts again at 12 s
    assert not unseen.counts_cover(windows, 15.5, 16.5)  # the counts end at 16 s
