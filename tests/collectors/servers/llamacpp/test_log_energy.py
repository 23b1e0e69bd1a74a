"""Logged requests' energy is the continuous token-rate split, whatever the meter's rate."""

from __future__ import annotations

import pytest

from collectors.energy.attribution import attribute_records
from collectors.servers.llamacpp.log import LoggedRequest
from collectors.servers.server_log import TimedRequest, to_record

POWER_W = 250.0


def logged(task: int, t_send_s: float, prompt_s: float, t_done_s: float, tokens: int) -> TimedRequest:
    """A request as the log tells it: totals and times in ms, its end on spectop's clock."""
    total_ms = 1000.0 * (t_done_s - t_send_s)
    request = LoggedRequest(
        slot_id=task,
        task_id=task,
        prompt_tokens=10,
        prompt_ms=1000.0 * prompt_s,
        generated_tokens=tokens,
        eval_ms=total_ms - 1000.0 * prompt_s,
        total_ms=total_ms,
    )
    return TimedRequest(request, t_done_s)


# Held out: three overlapping requests. The first token closes the prompt time, the rest the eval
# time, so each runs at a constant rate in each phase:
#   a: sent 0.0, prompt 0.5 s, done 4.5, 201 tokens: 1 token over (0, 0.5] = 2/s, 200 over (0.5, 4.5] = 50/s
#   b: sent 1.0, prompt 0.5 s, done 3.5,  41 tokens: 2/s over (1, 1.5], 40 over (1.5, 3.5] = 20/s
#   c: sent 3.0, prompt 1.0 s, done 6.0,  61 tokens: 1/s over (3, 4], 60 over (4, 6] = 30/s
# A constant 250 W split by ∫ P·rate_i/Σrate dt, piece by piece (125 J per half second):
#   (0, 1]      a alone                      a 250
#   (1, 1.5]    a 50, b 2     (125 J)        a 125·50/52, b 125·2/52
#   (1.5, 3]    a 50, b 20    (375 J)        a 375·50/70, b 375·20/70
#   (3, 3.5]    a 50, b 20, c 1 (125 J)      a 125·50/71, b 125·20/71, c 125·1/71
#   (3.5, 4]    a 50, c 1     (125 J)        a 125·50/51, c 125·1/51
#   (4, 4.5]    a 50, c 30    (125 J)        a 125·50/80, c 125·30/80
#   (4.5, 6]    c alone       (375 J)        c 375
# a = 926.752 J / 201 = 4610.7 mJ/token, b = 147.162 J / 41 = 3589.3, c = 426.087 J / 61 = 6985.0
# (together 1500 J: 250 W over the 6 s something ran)
TRUTH_MJ = {"s1 t1": 4610.70, "s2 t2": 3589.31, "s3 t3": 6985.03}


@pytest.mark.parametrize("rate_hz", [1, 2, 5, 10, 20, 50])
def test_logged_requests_read_the_continuous_split_at_every_meter_rate(rate_hz: int) -> None:
    records = [
        to_record(logged(1, 0.0, 0.5, 4.5, 201), "http://x"),
        to_record(logged(2, 1.0, 0.5, 3.5, 41), "http://x"),
        to_record(logged(3, 3.0, 1.0, 6.0, 61), "http://x"),
    ]
    # readings from 1 s before the first request to 1 s after the last, offset so no reading lands
    # on a request's edge
    times_s = [-1.0 + 0.013 + k / rate_hz for k in range(8 * rate_hz + 1)]
    energies_j = [POWER_W * (t + 1.0) for t in times_s]
    results = attribute_records(records, times_s, energies_j)
    read_mj = {k: result.mj_per_token for k, result in results.items()}
    assert read_mj == {k: pytest.approx(v, rel=0.02) for k, v in TRUTH_MJ.items()}
