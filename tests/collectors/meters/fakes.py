"""Small shared fakes for the meter tests."""

from __future__ import annotations


class FakeClock:
    def __init__(self, t_s: float = 100.0) -> None:
        self.t_s = t_s

    def __call__(self) -> float:
        return self.t_s

    def advance(self, dt_s: float) -> None:
        self.t_s += dt_s
