"""Monotone piecewise-cubic interpolation in log2(batch), for calibrated rate and power curves.

The table is measured at a few batch sizes (1, 2, 4, 8, 16). Between them a Fritsch-Carlson
(PCHIP) Hermite cubic in x = log2(B) passes through every measured point, never overshoots a
neighbouring point and keeps each interval's direction. Outside the measured range the curve is
clamped to its end values: below the first batch the first value, beyond the last batch the last
value (an aggregate throughput that has saturated, a power that has reached its plateau).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _pchip_slopes(xs: tuple[float, ...], ys: tuple[float, ...]) -> tuple[float, ...]:
    """Derivatives at each knot that keep the Hermite cubic monotone on every interval."""
    n = len(xs)
    if n == 1:
        return (0.0,)
    h = [xs[i + 1] - xs[i] for i in range(n - 1)]
    delta = [(ys[i + 1] - ys[i]) / h[i] for i in range(n - 1)]
    if n == 2:
        return (delta[0], delta[0])
    d = [0.0] * n
    for i in range(1, n - 1):
        if delta[i - 1] * delta[i] <= 0.0:
            d[i] = 0.0
        else:
            w1 = 2.0 * h[i] + h[i - 1]
            w2 = h[i] + 2.0 * h[i - 1]
            d[i] = (w1 + w2) / (w1 / delta[i - 1] + w2 / delta[i])
    d[0] = _end_slope(h[0], h[1], delta[0], delta[1])
    d[-1] = _end_slope(h[-1], h[-2], delta[-1], delta[-2])
    return tuple(d)


def _end_slope(h0: float, h1: float, m0: float, m1: float) -> float:
    """Shape-preserving three-point end slope (the one SciPy's PchipInterpolator uses)."""
    d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    if d * m0 <= 0.0:
        return 0.0
    if m0 * m1 <= 0.0 and abs(d) > abs(3.0 * m0):
        return 3.0 * m0
    return d


@dataclass(frozen=True, slots=True)
class Curve:
    """A quantity measured at some batch sizes, interpolated monotonically in log2(batch)."""

    batches: tuple[float, ...]
    values: tuple[float, ...]
    _xs: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _slopes: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.batches) != len(self.values) or not self.batches:
            raise ValueError("a curve needs as many values as batches, and at least one")
        if any(b <= 0 for b in self.batches) or list(self.batches) != sorted(set(self.batches)):
            raise ValueError("curve batches must be positive and strictly increasing")
        xs = tuple(math.log2(b) for b in self.batches)
        object.__setattr__(self, "_xs", xs)
        object.__setattr__(self, "_slopes", _pchip_slopes(xs, tuple(self.values)))

    def at(self, batch: float) -> float:
        """The value at `batch` concurrent requests (clamped outside the measured range)."""
        if batch <= self.batches[0]:
            return self.values[0]
        if batch >= self.batches[-1]:
            return self.values[-1]
        x = math.log2(batch)
        xs = self._xs
        i = 0
        while xs[i + 1] < x:
            i += 1
        h = xs[i + 1] - xs[i]
        t = (x - xs[i]) / h
        y0, y1 = self.values[i], self.values[i + 1]
        d0, d1 = self._slopes[i], self._slopes[i + 1]
        t2, t3 = t * t, t * t * t
        return (
            (2 * t3 - 3 * t2 + 1) * y0
            + (t3 - 2 * t2 + t) * h * d0
            + (-2 * t3 + 3 * t2) * y1
            + (t3 - t2) * h * d1
        )

    def scaled(self, factor: float) -> Curve:
        """The same curve with every value multiplied by `factor`."""
        return Curve(self.batches, tuple(v * factor for v in self.values))
