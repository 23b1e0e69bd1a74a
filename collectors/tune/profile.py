"""A load profile: the share of tokens served at each batch level, from a recording, the energy
ledger or given (`1:0.5,4:0.3,16:0.2`).

The prediction weighs each batch's energy per token by the tokens served there, so a profile is
token shares. A recording's are the tokens of its poll windows at each level (the same windows
`spectop report FILE` shows, collectors/recording/report.py); the ledger's the tokens it summed by
batch level over the last days; a given one is taken as token shares as typed, normalised to sum
to 1. Level 0 (idle: no tokens) carries no energy per token and is left out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import SpectopError
from collectors.ledgerdb.store import EnergyStore, default_path
from collectors.recording.reader import is_recording, read_recording
from collectors.recording.report import summarize_recording

PROFILE_FIX = "give --profile 1:0.5,4:0.3,16:0.2 (token shares by batch), a recording, or ledger[:7d]"
_GIVEN = re.compile(r"^\s*\d+\s*:\s*\d+(\.\d+)?\s*(,\s*\d+\s*:\s*\d+(\.\d+)?\s*)*,?\s*$")


@dataclass(frozen=True, slots=True)
class LoadProfile:
    source: str  # where the shares come from, in words
    token_share: Mapping[int, float]  # batch -> share of the tokens served there; sums to 1


def shares(tokens: Mapping[int, float], source: str) -> LoadProfile:
    total = sum(v for b, v in tokens.items() if b >= 1)
    if total <= 0:
        raise SpectopError(f"{source} has no tokens served at any batch", PROFILE_FIX)
    return LoadProfile(source, {b: v / total for b, v in sorted(tokens.items()) if b >= 1 and v > 0})


def even(batches: tuple[int, ...]) -> LoadProfile:
    """The default: each measured batch serving the same tokens."""
    return shares(dict.fromkeys(batches, 1.0), "each measured batch alike: no --profile given")


def load_profile(spec: str, ledger_path: Path | None = None) -> LoadProfile:
    """`spec` as a profile: `B:SHARE,...`, `ledger` or `ledger:7d`, or a recording's path."""
    if _GIVEN.match(spec):
        pairs = [part.split(":") for part in spec.replace(" ", "").strip(",").split(",")]
        tokens: dict[int, float] = {}
        for batch, share in pairs:
            if int(batch) < 1:
                raise SpectopError(f"--profile {spec!r}: a batch is a whole number from 1", PROFILE_FIX)
            tokens[int(batch)] = tokens.get(int(batch), 0.0) + float(share)
        return shares(tokens, f"given ({spec.strip()})")
    if spec == "ledger" or spec.startswith("ledger:"):
        return _ledger(spec.partition(":")[2] or "7d", ledger_path or default_path())
    path = Path(spec)
    if not path.is_file() or not is_recording(path):
        raise SpectopError(f"--profile {spec!r} is not a recording, the ledger or B:SHARE pairs", PROFILE_FIX)
    levels = summarize_recording(read_recording(path))["batch_levels"]
    return shares({row["busy_slots"]: row["tokens"] for row in levels}, f"recording {path.name}")


def _ledger(age: str, path: Path) -> LoadProfile:
    match = re.fullmatch(r"(\d+)([hd])", age)
    if match is None:
        raise SpectopError(f"--profile ledger:{age}: give an age such as 7d or 36h", PROFILE_FIX)
    seconds = int(match[1]) * (3600 if match[2] == "h" else 86400)
    if not path.is_file():
        raise SpectopError(
            f"no energy ledger at {path}", "run the dashboard or spectop export first, or " + PROFILE_FIX
        )
    with EnergyStore(path) as store:
        rows = store.hours(time.time() - seconds)
    tokens: dict[int, float] = {}
    for row in rows:
        tokens[row.batch_level] = tokens.get(row.batch_level, 0.0) + row.tokens
    return shares(tokens, f"the energy ledger, last {age}")
