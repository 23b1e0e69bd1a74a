"""Every point is checked and flagged, never silently dropped or silently trusted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Row = Mapping[str, Any]


def flag(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


def point_flags(row: Row, max_tokens: int, meter_method: str) -> list[dict[str, str]]:
    """Flags a point earns on its own: void or unknown drafting, low concurrency, early stops,
    meter trouble, other traffic."""
    batch = row["batch"]
    flags = drafting_flags(row)
    server_mean = row.get("server_busy_per_decode")
    busy_max = row.get("concurrency_max")
    if server_mean is not None:
        if server_mean < 0.75 * batch:
            flags.append(
                flag(
                    "concurrency",
                    f"the server ran {server_mean:.1f} requests per decode on average, "
                    f"not {batch} (too few slots? start it with -np >= the batch)",
                )
            )
    elif busy_max is None:
        flags.append(flag("concurrency-unknown", "the server did not say how many requests it ran at once"))
    elif busy_max < batch:
        flags.append(
            flag(
                "concurrency",
                f"the server ran at most {busy_max} requests at once, not {batch} "
                "(too few slots? start it with -np >= the batch)",
            )
        )
    errors = [r for r in row["requests"] if r.get("error")]
    if errors:
        flags.append(
            flag("request-errors", f"{len(errors)} of {batch} requests failed: {errors[0]['error']}")
        )
    short = [
        r for r in row["requests"] if not r.get("error") and (r.get("committed_tokens") or 0) < max_tokens
    ]
    if short:
        flags.append(
            flag("early-stop", f"{len(short)} of {batch} requests stopped before {max_tokens} tokens")
        )
    if not row["energy_covered"]:
        flags.append(flag("meter-gap", "the meter's samples do not cover the whole window"))
    if row["short_window"]:
        flags.append(
            flag(
                "short-window",
                f"the {row['window_s']:.2f} s window is shorter than 10 meter "
                f"update periods ({row['meter_update_period_s']:g} s each): "
                "use longer answers (--tokens)",
            )
        )
    if meter_method == "estimate":
        flags.append(flag("estimate", "energy is a CPU-load estimate, not a measurement"))
    traffic = other_traffic_flag(row)
    return flags + ([traffic] if traffic else [])


def drafting_flags(row: Row) -> list[dict[str, str]]:
    """A draft point that drafted nothing is void; one whose server gave no counts is unknown."""
    if row["arm"] != "draft":
        return []
    if row["drafted"] == 0:
        return [
            flag(
                "void",
                "the draft arm drafted nothing: a void point (llama-server needs "
                "--spec-type draft-simple as well as -md)",
            )
        ]
    flags = []
    if row["drafted"] is None:
        flags.append(
            flag(
                "drafting-unknown",
                "the server reported no drafted or accepted counts, per request or on /metrics "
                "(vLLM: start it with --per-request-spec-decode-metrics summary, or without "
                "--disable-log-stats): acceptance and width are unknown",
            )
        )
    if not row.get("steps_exact", True) and row.get("mean_advance") is not None:
        flags.append(
            flag(
                "steps-inferred",
                "G is read from stream bursts, not the server's step counts: under load bursts "
                "split and merge, so G may be off",
            )
        )
    return flags


def other_traffic_flag(row: Row) -> dict[str, str] | None:
    """The server generated more (or fewer) tokens than spectop's requests, beyond its rounding."""
    server_tokens = row.get("server_tokens")
    tolerance = row.get("server_tokens_tolerance") or 0
    if server_tokens is None or abs(server_tokens - row["committed_tokens"]) <= tolerance:
        return None
    rounded = f" (± {tolerance}: its counters are printed rounded)" if tolerance else ""
    return flag(
        "other-traffic",
        f"the server generated {server_tokens} tokens in the window{rounded}, "
        f"spectop's requests {row['committed_tokens']}: other traffic was running",
    )


def mismatch_flag(row: Row, reference: Row | None) -> dict[str, str] | None:
    """Plain and draft must produce the same text at temperature 0, request by request."""
    if reference is None:
        return None
    mine = [r.get("text_sha256") for r in row["requests"]]
    theirs = [r.get("text_sha256") for r in reference["requests"]]
    differing = sum(1 for a, b in zip(mine, theirs) if a != b)
    if differing == 0:
        return None
    return flag(
        "output-mismatch", f"{differing} of {len(mine)} outputs differ from the plain arm's at temperature 0"
    )


def drift_flag(after: Row, before: Row | None, limit: float) -> dict[str, str] | None:
    """Plain measured after draft should agree with plain before it (note 25: within 1 %)."""
    if before is None or not before.get("mj_per_token") or not after.get("mj_per_token"):
        return None
    drift = after["mj_per_token"] / before["mj_per_token"] - 1.0
    if abs(drift) <= limit:
        return None
    return flag(
        "plain-drift",
        f"plain after draft reads {100 * drift:+.1f} % mJ/token against plain before "
        f"(limit {100 * limit:.0f} %): the machine was not steady",
    )
