"""Request records built by hand, for the attribution and dashboard-state tests."""

from __future__ import annotations

from collectors.requests import latency
from collectors.requests.record import RequestRecord


def record(
    request_id: str, t_send_s: float, t_done_s: float, tokens: int, concurrency_max: int | None = None
) -> RequestRecord:
    """A request committing `tokens` one at a time, evenly over its span after a short prefill."""
    step_s = (t_done_s - t_send_s) / (tokens + 1)
    events = tuple(latency.ChunkEvent(t_send_s + (i + 1) * step_s, 1) for i in range(tokens))
    return RequestRecord(
        request_id=request_id,
        server_url="http://s",
        route="/completion",
        t_send_s=t_send_s,
        t_done_s=t_done_s,
        events=events,
        latency=latency.profile(events, t_send_s, drafting=False),
        committed_tokens=tokens,
        concurrency_max=concurrency_max,
    )
