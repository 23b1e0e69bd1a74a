"""What "drafting off" costs when speculation is configured: a step with K = 0 is not a plain step.

Calibrated to published measurements, not to note 25 (which never ran K = 0):

- vLLM, speculation configured with K = 0 against no speculation at all: +6.6 % time per output
  token at concurrency 2 and +21.6 % at 189 (`VLLM_PUBLISHED`). Between the two the overhead is
  interpolated linearly in log B; outside them it is held at the nearer figure. At note 25's
  batches that gives +6.6 % (1, 2), +8.9 % (4), +11.2 % (8), +13.5 % (16).
- Another backend: 2.5x the step cost at batch >= 9 with no draft tokens scheduled
  (`OTHER_BACKEND_PUBLISHED`; nothing was published below 9, taken as no overhead there).

No SGLang figure is published; its K = 0 path (a one-token verify through the verify graph and
the draft's KV catch-up, sglang 0.5.23 srt/speculative/eagle_worker_v2.py:1469-1500) is the
same kind of work as vLLM's, so a simulated SGLang uses vLLM's figures too.

The figures are time. How much power the extra time draws was not published: the model takes it
as host-side time (launch gaps, bookkeeping; vLLM 0.33 forces piecewise CUDA graphs under a
dynamic schedule, vllm/config/vllm.py:1077-1086) in which the chip waits at its idle power. So a
K = 0 step lasts (1 + o) times a plain one, and its mean power is (P_plain + o x P_idle) / (1 + o).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class K0Overhead:
    """Extra time per output token of a K = 0 step over a plain one, by batch, and its source."""

    name: str
    points: tuple[tuple[int, float], ...]  # (batch, extra time as a fraction), batches increasing
    source: str
    log_interpolated: bool = True  # False: a step function (each point holds from its batch on)

    def fraction(self, batch: float) -> float:
        """The extra time at `batch` concurrent requests (0.066 is +6.6 %)."""
        points = self.points
        if not self.log_interpolated:
            return max((f for b, f in points if batch >= b), default=0.0)
        if batch <= points[0][0]:
            return points[0][1]
        for (b0, f0), (b1, f1) in zip(points, points[1:]):
            if batch <= b1:
                t = (math.log(batch) - math.log(b0)) / (math.log(b1) - math.log(b0))
                return f0 + t * (f1 - f0)
        return points[-1][1]

    def power_w(self, plain_w: float, idle_w: float, batch: float) -> float:
        """Mean chip power over a K = 0 step: plain's for the plain part, idle for the extra."""
        o = self.fraction(batch)
        return (plain_w + o * idle_w) / (1.0 + o)


VLLM_PUBLISHED = K0Overhead(
    "vllm",
    ((2, 0.066), (189, 0.216)),
    "vLLM, speculation configured with K = 0: +6.6 % time per output token at concurrency 2, "
    "+21.6 % at 189, against no speculation (published)",
)
OTHER_BACKEND_PUBLISHED = K0Overhead(
    "step-2.5x",
    ((9, 1.5),),
    "another backend: 2.5x the step cost at batch >= 9 with zero draft tokens scheduled (published)",
    log_interpolated=False,
)
NONE = K0Overhead("none", ((1, 0.0),), "no overhead: K = 0 costs what plain costs (an idealisation)")
K0_OVERHEADS = {o.name: o for o in (VLLM_PUBLISHED, OTHER_BACKEND_PUBLISHED, NONE)}
