"""Dashboard state helpers that need no Textual."""

from __future__ import annotations

from collectors.servers.snapshot import ServerSnapshot
from tui.state import slot_rates


def test_slot_rates_between_polls():
    prev = ServerSnapshot(url="u", backend="llama.cpp", taken_at_s=1.0, status="ok", busy_slot_tokens=((0, 10), (1, 50)))
    cur = ServerSnapshot(url="u", backend="llama.cpp", taken_at_s=1.5, status="ok", window_s=0.5,
                         busy_slot_tokens=((0, 40), (1, 5), (2, 7)))
    # slot 0 grew by 30 in 0.5 s; slot 1 started a new task; slot 2 was idle before
    assert slot_rates(prev, cur) == {0: 60.0}
    assert slot_rates(None, cur) == {}
