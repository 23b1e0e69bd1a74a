"""The real llama-server captures (tests/data/llama-server, copied from the shared fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

from collectors import promtext
from collectors.servers.llamacpp import collector as llamacpp

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "llama-server"
PREFIXES = ("plain", "draft-simple", "void")


def read_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def read_json(name: str):
    return json.loads(read_text(name))


def sse_lines(name: str) -> list[tuple[float, str]]:
    """(seconds since the request was sent, raw SSE line) for a captured stream."""
    rows = [json.loads(line) for line in read_text(name).splitlines() if line.strip()]
    return [(row["t_s"], row["line"]) for row in rows]


def raw(prefix: str, metrics: str, slots: str, t_s: float) -> llamacpp.RawPoll:
    """One llama-server poll made of the captures: /props, /slots (`idle`/`busy`), /metrics (`before`/...)."""
    return llamacpp.RawPoll(
        t_s,
        props=read_json(f"{prefix}.props.json"),
        slots=read_json(f"{prefix}.slots.{slots}.json"),
        metrics=promtext.parse(read_text(f"{prefix}.metrics.{metrics}.txt")),
    )
