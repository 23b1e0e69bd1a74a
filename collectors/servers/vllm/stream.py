"""vLLM's streams: its OpenAI routes, asked for usage on every chunk, and the per-request
`metrics.speculative_decoding` on the final chunk (with `--per-request-spec-decode-metrics
summary`, 0.29 and newer).

One SSE chunk can carry several tokens (one chunk per engine step, merged when the client lags):
the cumulative `usage.completion_tokens` counts them. `num_spec_steps` counts only the steps
that drafted (n-gram steps with no match are left out), so a request's steps are T − 1 − A,
never fewer than its drafted steps (collectors/requests/stream_state.py `steps`).
"""

from __future__ import annotations

from typing import Any

from collectors.requests.stream_state import StreamState
from collectors.servers.shapes import INT
from collectors.servers.wire import ChunkExtension, DialectWire

SPEC_METRICS = {
    "speculative_decoding": {
        "num_draft_tokens": INT,
        "num_accepted_draft_tokens": INT,
        "num_spec_steps": INT,
    }
}


def read_spec_metrics(state: StreamState, payload: dict[str, Any]) -> None:
    """The request's drafted and accepted tokens and drafted steps, where the chunk has them."""
    spec = ((payload.get("metrics") or {}).get("speculative_decoding")) or None
    if isinstance(spec, dict):
        state.spec_reported = True
        state.draft_n = int(spec.get("num_draft_tokens") or 0)
        state.draft_n_accepted = int(spec.get("num_accepted_draft_tokens") or 0)
        state.drafted_steps = int(spec.get("num_spec_steps") or 0)


CHUNK_SPEC_METRICS = ChunkExtension({"metrics": SPEC_METRICS}, read_spec_metrics)


class VllmWire(DialectWire):
    """vLLM's routes: OpenAI-style only, usage on every chunk, spec metrics on the last."""

    chunk_extension = CHUNK_SPEC_METRICS
