"""The live verdicts: does drafting pay at the current batch, and is a draft configured but unused.

UI-free, so the dashboard and any headless command say the same thing. The energy verdict compares
live drafting mJ/token with the last sweep's plain curve, read between measured batches linearly in
log B (the sweep summary's `at_batch`, the same line its crossover is found on). Pitfalls handled:
while a sweep runs the meter sees both of its arms, so no live figure is given; a server that does
not draft is told what drafting would do there instead; only the sweep's trustworthy points
(`collectors/sweep/checks.py` EXCLUDING) feed the curves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from collectors.launch.process import url_from_argv
from collectors.launch.specflags import is_void_draft
from collectors.live.accounting import LiveLedger
from collectors.servers import registry
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.arms import split_command
from collectors.sweep.records import PairedSummary, Summary
from collectors.sweep.rule import EVEN_BAND, Verdict, classify
from collectors.sweep.summary import at_batch

if TYPE_CHECKING:  # the schedule's code loads only after a tune (--schedule)
    from collectors.tune.view import ScheduleView


@dataclass(frozen=True, slots=True)
class LiveEnergy:
    """Live energy per token over the rolling window, and the verdict against the last sweep."""

    window_s: float | None
    mj_per_token: float | None
    net_mj_per_token: float | None
    tokens: int
    batch: float | None
    verdict: str
    reading: Verdict | None = None  # the rule's reading of drafting now, which colours the verdict
    net_problem: str | None = None  # why there is no net figure (the window is below the idle baseline)
    void: bool = False  # a draft is configured and nothing is drafted: the verdict is that, in red
    schedule: ScheduleView | None = None  # after a tune: the setting in effect and what it saved


def live_energy(live: LiveLedger, summary: Summary | None, sweep_running: bool) -> LiveEnergy:
    batch = live.current_batch()
    if sweep_running:
        # the meter sees both arms of the sweep; the watched server's tokens are not all of them
        return LiveEnergy(None, None, None, 0, batch, "sweep running: live energy resumes after it")
    r = live.rolling()
    drafting = live.latest.drafting if live.latest else None
    # a stuck or impossible meter gives no mJ/token: say why instead of "idle"
    said, reading = (
        (f"no live energy: {r.meter_problem}", None)
        if r.meter_problem
        else judged(r.mj_per_token, batch, summary, drafting)
    )
    return LiveEnergy(
        r.window_s, r.mj_per_token, r.net_mj_per_token, r.tokens, batch, said, reading, r.net_problem
    )


def verdict(
    mj_per_token: float | None,
    batch: float | None,
    summary: Summary | None,
    drafting: bool | None,
) -> str:
    """Live drafting mJ/token against the last sweep's plain curve at the current batch."""
    return judged(mj_per_token, batch, summary, drafting)[0]


def judged(
    mj_per_token: float | None,
    batch: float | None,
    summary: Summary | None,
    drafting: bool | None,
) -> tuple[str, Verdict | None]:
    """Live drafting mJ/token against the last sweep's plain curve at the current batch: the
    sentence, and the rule's reading of drafting's ratio (None where the server is not drafting)."""
    if summary is None:
        return "no sweep yet: press s to measure where drafting pays", None
    if batch is None or mj_per_token is None:
        return "idle: the verdict needs traffic on the server", None
    plain = curve_at(summary, "plain", batch)
    if plain is None:
        return "the last sweep has no plain curve to compare with", None
    if drafting is False:
        ratio = curve_ratio_at(summary, batch)
        if ratio is None:
            return "this server does not draft", None
        # what drafting would do is no reading of this server's energy: the verdict stays uncoloured
        return f"not drafting; at {batch:.1f} requests drafting {change(ratio, would=True)}", None
    ratio = mj_per_token / plain
    return (
        f"drafting {change(ratio)} at {batch:.1f} requests (vs the sweep's plain curve)",
        classify(ratio),
    )


def change(ratio: float, would: bool = False) -> str:
    """An energy ratio in words, read by the sweep's one rule (`rule.classify`: ±5 % is break-even).

    `would` gives the conditional, for a server that does not draft.
    """
    kind = classify(ratio)
    if kind is Verdict.SAVES:
        return f"{'would save' if would else 'saves'} {100 * (1 - ratio):.0f} %"
    if kind is Verdict.COSTS:
        return f"{'would cost' if would else 'costs'} {100 * (ratio - 1):.0f} % more"
    return f"{'would break' if would else 'breaks'} even ({100 * (ratio - 1):+.0f} %, within {100 * EVEN_BAND:.0f} %)"


def curve_at(record: Summary, arm: str, batch: float) -> float | None:
    """An arm's mJ/token in a paired sweep's summary at `batch`, between its measured batches."""
    if not isinstance(record, PairedSummary):
        return None
    figures = [(t.batch, t.plain if arm == "plain" else t.draft) for t in record.rows]
    return at_batch([(b, f.mj_per_token) for b, f in figures if f.mj_per_token and f.trusted], batch)


def curve_ratio_at(record: Summary, batch: float) -> float | None:
    """The draft/plain energy ratio at `batch`, from the summary's batches with a trustworthy pair."""
    if not isinstance(record, PairedSummary):
        return None
    return at_batch([(t.batch, t.energy_ratio) for t in record.rows if t.energy_ratio and t.trusted], batch)


VOID_LOADED = (
    "VOID: the draft model is loaded with -md but --spec-type is missing, so nothing is "
    "drafted (add --spec-type draft-simple)"
)


def void_warning(
    server_url: str,
    draft_url: str | None,
    draft_cmd: str | None,
    snapshot: ServerSnapshot | None,
    launched: Sequence[str] = (),
) -> str | None:
    """A draft configured for the watched server, but nothing drafted: say so loudly.

    `launched` is the command spectop started the watched server with (`spectop watch`): over HTTP a
    draft loaded and never used looks exactly like no draft, so only the command can tell.
    """
    url = server_url.rstrip("/")
    if launched and is_void_draft(launched):
        return VOID_LOADED
    if draft_cmd:
        argv = split_command(draft_cmd)
        if url_from_argv(argv) == url and is_void_draft(argv):
            return VOID_LOADED
    is_draft_arm = (draft_url and draft_url.rstrip("/") == url) or (
        draft_cmd and url_from_argv(split_command(draft_cmd)) == url
    )
    if is_draft_arm and snapshot is not None and snapshot.drafting is False:
        return f"VOID: this server is the draft arm but drafts nothing ({registry.hints('void_draft_hint')})"
    return None


def with_void(energy: LiveEnergy, warning: str | None) -> LiveEnergy:
    """The live energy of a server whose draft is void: its verdict is the void, not "does not draft"."""
    if warning is None:
        return energy
    return replace(energy, verdict="VOID: a draft is configured, nothing drafted", reading=None, void=True)
