"""What SGLang's JSON endpoints say: /server_info (server args, internal_states per DP rank,
version) and /v1/loads (one entry per DP rank, counted live on each call).

Server text is untrusted: every field is type-checked before use, and a missing or odd field
reads as None rather than an error (collectors/docs/servers.md, SGLang: names drift across 0.5.x).
"""

from __future__ import annotations

from typing import Any, TypeGuard

from collectors.servers.series import as_int
from collectors.servers.shapes import INT, NUMBER, member, objects

Info = dict[str, Any] | None
Loads = list[dict[str, Any]] | None


def _number(value: Any) -> TypeGuard[float]:
    return NUMBER.test(value)  # finite, and no bool


def int_field(info: Info, key: str) -> int | None:
    value = (info or {}).get(key)
    return value if INT.test(value) else None


def spec_section(load: dict[str, Any]) -> dict[str, Any]:
    """A /v1/loads rank's `speculative` object ({} when absent or not an object)."""
    section = load.get("speculative")
    return section if isinstance(section, dict) else {}


def str_field(info: Info, *keys: str) -> str | None:
    """The first of `keys` that holds a non-empty string."""
    return next((v for k in keys if isinstance(v := (info or {}).get(k), str) and v), None)


def loads_total(loads: Loads, key: str) -> float | None:
    """A /v1/loads figure summed over DP ranks; None when no rank gives it."""
    values = [load[key] for load in loads or [] if _number(load.get(key))]
    return float(sum(values)) if values else None


def loads_spec(loads: Loads, key: str) -> float | None:
    """`speculative.<key>` over DP ranks, weighted by running requests; zeros mean "not measured"."""
    pairs = [(spec_section(load).get(key), load.get("num_running_reqs") or 0) for load in loads or []]
    rows = [(v, w if _number(w) else 0) for v, w in pairs if _number(v) and v > 0]
    if not rows:
        return None
    weight = sum(w for _, w in rows)
    return sum(v * w for v, w in rows) / weight if weight else sum(v for v, _ in rows) / len(rows)


def lifetime_accept_length(loads: Loads, info: Info) -> float | None:
    """Accepted length since start (or the last /flush_cache): /v1/loads, else internal_states."""
    from_loads = loads_spec(loads, "accept_length")
    if from_loads is not None:
        return from_loads
    states = objects(member(info, "internal_states"))
    values = [s["avg_spec_accept_length"] for s in states if _number(s.get("avg_spec_accept_length"))]
    return sum(values) / len(values) if values else None


def spec_types(info: Info) -> str | None:
    """e.g. "EAGLE3 steps=3 topk=1 draft_tokens=4"; None without a speculative algorithm."""
    info = info or {}
    if not info.get("speculative_algorithm"):
        return None
    parts = [str(info["speculative_algorithm"])]
    for key, short in (
        ("speculative_num_steps", "steps"),
        ("speculative_eagle_topk", "topk"),
        ("speculative_num_draft_tokens", "draft_tokens"),
    ):
        if info.get(key) is not None:
            parts.append(f"{short}={info[key]}")
    return " ".join(parts)


def slots_total(loads: Loads, info: Info) -> int | None:
    """Most requests that can run at once: /v1/loads, else internal_states, else the server arg."""
    from_loads = loads_total(loads, "max_running_requests")
    if from_loads:
        return as_int(from_loads)
    per_dp = [
        s.get("effective_max_running_requests_per_dp") for s in objects(member(info, "internal_states"))
    ]
    counts = [v for v in per_dp if isinstance(v, int) and INT.test(v)]
    if per_dp and len(counts) == len(per_dp):
        return sum(counts)
    return int_field(info, "max_running_requests")
