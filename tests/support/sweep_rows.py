"""Sweep rows as the summary reads them: note 25's table (collectors/docs/note25.md) as measured points.

Each batch has a plain point before and after its draft point; figures are note 25's tok/s and W.
"""

from __future__ import annotations

from collectors.sweep.codec import from_json
from collectors.sweep.point import SweepPoint
from collectors.sweep.run_meta import RunMeta

# note 25: requests, plain tok/s, draft tok/s, plain W, draft W
NOTE25 = [
    (1, 61.9, 78.3, 22.9, 29.8),
    (2, 100.2, 125.5, 39.1, 35.0),
    (4, 192.3, 163.4, 39.0, 37.1),
    (8, 339.2, 229.8, 36.9, 37.6),
    (16, 377.0, 329.1, 35.9, 37.5),
]


def row(
    batch, arm, tok_s, power_w, seconds=10.0, phase="", drafted=0, accepted=0, steps=0, flags=(), pass_=0
):
    tokens = round(tok_s * seconds)
    return {
        "batch": batch,
        "arm": arm,
        "phase": phase,
        "pass": pass_,
        "window_s": tokens / tok_s,
        "committed_tokens": tokens,
        "energy_j": power_w * tokens / tok_s,
        "net_energy_j": None,
        "drafted": drafted,
        "accepted": accepted,
        "steps": steps,
        "flags": [{"code": c, "message": c} for c in flags],
    }


def note25_rows():
    rows = []
    for b, p_tok, d_tok, p_w, d_w in NOTE25:
        rows += [
            row(b, "plain", p_tok, p_w, phase="before"),
            row(b, "draft", d_tok, d_w, drafted=400, accepted=280, steps=200),
            row(b, "plain", p_tok, p_w, phase="after"),
        ]
    return rows


RATES = {1: 0.5, 2: 1.0, 4: 2.0}  # note 25's batch: the rate whose plain points had it in flight


def _seconds(level: int) -> list[float]:
    """10 s at `level` in flight: a mean of exactly `level`."""
    return [0.0] * level + [10.0]


def rate_rows() -> list[dict]:
    """Open-loop rows: note 25's B=1, 2, 4 figures at rates 0.5, 1, 2/s, whose plain points had
    1, 2 and 4 requests in flight on average (draft one more)."""
    rows = []
    for b, p_tok, d_tok, p_w, d_w in NOTE25:
        if b not in RATES:
            continue
        load = {"rate_rps": RATES[b], "arrivals": "poisson", "seed": 0, "requests": 64}
        # draft's in flight differs from plain's (one more here): read on it, the crossover would move
        plain_flight = {"mean": b, "p50": b, "p90": b, "max": b, "seconds": _seconds(b)}
        draft_flight = {"mean": b + 1, "p50": b + 1, "p90": b + 1, "max": b + 1, "seconds": _seconds(b + 1)}
        for r in (
            row(b, "plain", p_tok, p_w, phase="before"),
            row(b, "draft", d_tok, d_w, drafted=400, accepted=280, steps=200),
            row(b, "plain", p_tok, p_w, phase="after"),
        ):
            r.update(batch=0, load=load, in_flight=draft_flight if r["arm"] == "draft" else plain_flight)
            rows.append(r)
    return rows


def flagged(rows, batch, arm, code, phase=None):
    """`rows` with one code added to the points of `arm` at `batch` (and `phase`, when given)."""
    for r in rows:
        if r["batch"] == batch and r["arm"] == arm and phase in (None, r["phase"]):
            r["flags"] = r["flags"] + [{"code": code, "message": code}]
            if code == "meter-gap":
                r["energy_covered"] = False
    return rows


def fine_point(**over):
    """A draft point at B=4 that earns no flag: 4 requests of 64 tokens (the same text), the
    server's 256 tokens, 10 s covered by a 0.1 s meter; `over` changes what a test needs."""
    base = {
        "batch": 4,
        "arm": "draft",
        "drafted": 10,
        "concurrency_max": 4,
        "energy_covered": True,
        "short_window": False,
        "window_s": 10.0,
        "meter_update_period_s": 0.1,
        "committed_tokens": 256,
        "server_tokens": 256,
        "requests": [{"committed_tokens": 64, "text_sha256": "a"}] * 4,
    }
    return as_point({**base, **over})


def as_point(row):
    """A row in its points.jsonl form as the sweep's record (the one codec reads it)."""
    return from_json(SweepPoint, row)


def points(rows):
    return [as_point(r) for r in rows]


def run_meta(data):
    """A meta.json's content as the sweep's record."""
    return from_json(RunMeta, data)
