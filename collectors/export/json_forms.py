"""Stable JSON forms of snapshots, requests and energy windows (documented in the README).

Snapshot schema 2: `window_steps`, `steps_total`, G, width and survival count every decode step
(schema 1 divided by the drafts counter on llama-server and vLLM) and window figures no longer
fall back to lifetime counters, which have their own keys (`*_lifetime`).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from collectors.energy import ledger
from collectors.meters.sampler import Sampler
from collectors.requests.latency import Tail
from collectors.requests.record import RequestRecord
from collectors.servers.latency import ServerLatency
from collectors.servers.snapshot import ServerSnapshot

SNAPSHOT_SCHEMA = "spectop.snapshot/2"
REQUEST_SCHEMA = "spectop.request/1"


def finite(value: Any) -> Any:
    """`value` with every NaN or infinity, however deep, made None: JSON has no such numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kw: Any) -> str:
    """Strict JSON (never NaN or Infinity, which many readers reject): non-finite numbers become null."""
    return json.dumps(finite(value), allow_nan=False, **kw)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def tail_dict(tail: Tail) -> dict[str, Any]:
    return {
        "count": tail.count,
        "p50_ms": _round(tail.p50_ms),
        "p95_ms": _round(tail.p95_ms),
        "p99_ms": _round(tail.p99_ms),
        "max_ms": _round(tail.max_ms),
    }


def snapshot_dict(snap: ServerSnapshot) -> dict[str, Any]:
    """Everything the dashboard shows of a server, plus the derived drafting figures."""
    body = asdict(snap)
    body.pop("taken_at_s")
    body.pop("latency_counters")  # lifetime buckets: only their window deltas mean something
    body["per_position_total"] = list(snap.per_position_total)
    body["window_per_position"] = list(snap.window_per_position)
    body["busy_slot_tokens"] = [list(pair) for pair in snap.busy_slot_tokens]
    body.update(
        schema=SNAPSHOT_SCHEMA,
        acceptance=_round(snap.acceptance),
        mean_advance=_round(snap.mean_advance),
        advance_per_drafted_step=_round(snap.advance_per_drafted_step),
        verified_width=_round(snap.verified_width),
        survival=[_round(s) for s in snap.survival],
        window_approximate=snap.window_approximate,
        acceptance_lifetime=_round(snap.acceptance_lifetime),
        mean_advance_lifetime=_round(snap.mean_advance_lifetime),
        live_tok_s=_round(snap.live_tok_s, 2),
        window_s=_round(snap.window_s, 3),
        busy_slots_per_decode=_round(snap.busy_slots_per_decode),
    )
    return body


def server_latency_dict(latency: ServerLatency | None) -> dict[str, Any] | None:
    """The server's own tails over a window (its histograms' deltas), cache hit ratio and finish reasons."""
    if latency is None:
        return None
    return {
        "window_s": _round(latency.window_s, 3),
        "tails": {
            kind: {
                "observations": tail.observations,
                "p50_ms": _round(tail.p50_ms),
                "p95_ms": _round(tail.p95_ms),
                "p99_ms": _round(tail.p99_ms),
                "mean_ms": _round(tail.mean_ms),
            }
            for kind, tail in latency.tails.items()
        },
        "prefix_cache_hit_ratio": _round(latency.cache_hit_ratio),
        "finished": dict(latency.finished),
    }


def request_dict(record: RequestRecord) -> dict[str, Any]:
    """One request: the server's counts, what spectop derived, and the latency tails."""
    lat = record.latency
    return {
        "schema": REQUEST_SCHEMA,
        "request_id": record.request_id,
        "server_url": record.server_url,
        "route": record.route,
        "model": record.model,
        "tag": record.tag,
        "error": record.error,
        "committed_tokens": record.committed_tokens,
        "prompt_tokens": record.prompt_tokens,
        "draft_n": record.draft_n,
        "draft_n_accepted": record.draft_n_accepted,
        "acceptance": _round(record.acceptance),
        "steps": record.steps,
        "steps_exact": record.steps_exact,
        "mean_advance": _round(record.mean_advance),
        "verified_width": _round(record.verified_width),
        "duration_s": _round(record.duration_s),
        "tok_s": _round(record.tok_s, 2),
        "decode_tok_s": _round(record.decode_tok_s, 2),
        "ttft_ms": _round(lat.ttft_ms, 3),
        "events": lat.events,
        "chunk_gaps": tail_dict(lat.chunk_gaps),
        "token_gaps": tail_dict(lat.token_gaps),
        "step_gaps": tail_dict(lat.step_gaps),
        "burst_sizes": list(lat.burst_sizes),
        "tokens_per_event_exact": record.tokens_per_event_exact,
        "concurrency_mean": _round(record.concurrency_mean, 3),
        "concurrency_max": record.concurrency_max,
        "finish_reason": record.finish_reason,
        "text_sha256": record.text_sha256,
        "text_chars": record.text_chars,
    }


def energy_dict(
    sampler: Sampler | None, t0_s: float, t1_s: float, tokens: int | None
) -> dict[str, Any] | None:
    """Energy over [t0, t1] from a running sampler, with the meter's identity; None without a meter.

    Where the meter's samples do not cover the window, `energy_j` is only what they cover (a lower
    bound, `covered: false`) and the figures derived from it, W and mJ/token, are null.
    """
    if sampler is None:
        return None
    window = sampler.energy_between(t0_s, t1_s, wait_s=1.0)
    seconds = t1_s - t0_s
    value_j = window.energy_j if window.covered else None
    return {
        "meter": asdict(sampler.meter.info),
        "window_s": _round(seconds, 3),
        "energy_j": _round(window.energy_j, 4),
        "power_w": _round(value_j / seconds, 3) if value_j is not None and seconds > 0 else None,
        "mj_per_token": _round(_mj(value_j, tokens), 3),
        "covered": window.covered,
        "short_window": window.short_window,
    }


def _mj(energy_j: float | None, tokens: int | None) -> float | None:
    return ledger.mj_per_token(energy_j, tokens) if energy_j is not None and tokens else None
