"""Traffic spectop did not send, from the server's token counts, as shares the split takes off first.

The meter sees the whole device: a probe beside 15 other busy slots was charged all 37.6 W (1881
mJ/token where the dashboard's panel read 137). Where the server counts the tokens it generated
in each poll window (a dialect's `window_tokens`: slot progress deltas or token counters),
the tokens spectop's own requests did not commit in that window are the unseen traffic's, and
the split (ledger.attribute_energy_j) gives them their share by tokens before splitting the rest.

Pitfalls handled: the server counts a token when it decodes it, spectop when the chunk arrives a
few milliseconds later, so at a poll the server can lead spectop by a step's tokens (5 with a
4-token draft) and give them back by the next; the unseen tokens by a window's end are the least
lead (server − own, along the chain of adjacent windows) then or later, never a lead clipped
window by window, which made a lone probe share its energy with traffic that never ran. A poll
that counted nothing (a failed poll, a server restart) breaks the chain: coverage starts again.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from collectors.energy import ledger

_ADJACENT_S = 0.01  # two windows this close at their seam are one chain (a recording keeps ms)


class TokenPoll(Protocol):
    """A poll that says how many tokens the server generated since the previous one (a ServerSnapshot)."""

    @property
    def taken_at_s(self) -> float: ...

    @property
    def window_s(self) -> float | None: ...

    @property
    def window_tokens(self) -> int | None: ...


def counting_windows(polls: Iterable[TokenPoll]) -> list[tuple[float, float, int]]:
    """(start, end, tokens) of every poll window in which the server counted its tokens, in time order.

    A window starts where the one before it ended when they meet within `_ADJACENT_S`: a window
    runs from the previous successful poll, and a recording keeps its length to the millisecond.
    """
    out: list[tuple[float, float, int]] = []
    for p in sorted(polls, key=lambda p: p.taken_at_s):
        if p.window_s is not None and p.window_s > 0 and p.window_tokens is not None:
            start_s = p.taken_at_s - p.window_s
            if out and abs(start_s - out[-1][1]) <= _ADJACENT_S:
                start_s = out[-1][1]
            out.append((start_s, p.taken_at_s, p.window_tokens))
    return out


@dataclass(frozen=True, slots=True)
class UnseenWindow:
    """A poll window: the tokens of traffic spectop did not send, and their share of its joules."""

    t0_s: float
    t1_s: float
    unseen_tokens: float
    share: float  # of the joules spent while spectop's own requests ran in it


def unseen_windows(polls: Iterable[TokenPoll], own: Sequence[ledger.RequestActivity]) -> list[UnseenWindow]:
    """Each counting window's unseen tokens and their share by tokens: U / (U + own tokens).

    U is the window's unseen tokens prorated to the time own requests ran in it (the unseen
    traffic is spread evenly over the window); the share is taken on the window as a whole, not
    meter interval by meter interval, where a few own tokens against a steady stream would make
    the split follow the meter's rate.
    """
    curves = [(a.t_start_s, a.t_end_s, ledger.TokenCurve(a)) for a in own]
    spans = _merged((a.t_start_s, a.t_end_s) for a in own)
    windows = counting_windows(polls)
    own_counts = [
        sum(c.between(t0_s, t1_s) for a_s, b_s, c in curves if a_s < t1_s and t0_s < b_s)
        for t0_s, t1_s, _ in windows
    ]
    chained = [k > 0 and windows[k - 1][1] == w[0] for k, w in enumerate(windows)]
    lead: list[float] = []  # server − own since the chain began, at each window's end
    for k, (w, own_tokens) in enumerate(zip(windows, own_counts, strict=True)):
        lead.append((lead[-1] if chained[k] else 0.0) + w[2] - own_tokens)
    # the unseen tokens by a window's end: the least lead then or later in the chain, so a lead the
    # server gives back (it counted a token before spectop saw it) is no traffic
    unseen_by = [0.0] * len(windows)
    least = float("inf")
    for k in reversed(range(len(windows))):
        least = min(lead[k], least if k + 1 < len(windows) and chained[k + 1] else float("inf"))
        unseen_by[k] = max(0.0, least)
    out = []
    for k, ((t0_s, t1_s, _), own_tokens) in enumerate(zip(windows, own_counts, strict=True)):
        unseen = unseen_by[k] - (unseen_by[k - 1] if chained[k] else 0.0)
        running_s = sum(max(0.0, min(b, t1_s) - max(a, t0_s)) for a, b in spans)
        beside = unseen * running_s / (t1_s - t0_s)
        share = beside / (beside + own_tokens) if beside + own_tokens > 0 else 0.0
        out.append(UnseenWindow(t0_s, t1_s, unseen, share))
    return out


def _merged(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def counts_cover(windows: Sequence[UnseenWindow], t0_s: float, t1_s: float) -> bool:
    """Adjacent counting windows (in time order, as `unseen_windows` gives them) run from at or
    before `t0_s` to at or after `t1_s`."""
    k = bisect.bisect_right(windows, t0_s, key=lambda w: w.t0_s) - 1  # the last to start at or before t0_s
    if k < 0:
        return False
    while windows[k].t1_s < t1_s:
        if k + 1 == len(windows) or windows[k + 1].t0_s != windows[k].t1_s:
            return False  # the counts stop, or a gap in them, inside the span
        k += 1
    return True


def unseen_tokens(windows: Sequence[UnseenWindow], t0_s: float, t1_s: float) -> float:
    """The unseen traffic's tokens within [t0_s, t1_s], spread evenly over each window (in time order)."""
    total = 0.0
    for w in windows[bisect.bisect_right(windows, t0_s, key=lambda w: w.t1_s) :]:
        if w.t0_s >= t1_s:
            break
        total += w.unseen_tokens * (min(w.t1_s, t1_s) - max(w.t0_s, t0_s)) / (w.t1_s - w.t0_s)
    return total


def own_share(own: ledger.RequestActivity, own_tokens: int, polls: Sequence[TokenPoll]) -> float | None:
    """A lone request's share of the device's joules over its span: own / (own + unseen tokens).

    None when the server's counts do not cover the span (then nothing can be said).
    """
    windows = unseen_windows(polls, [own])
    if own_tokens <= 0 or not counts_cover(windows, own.t_start_s, own.t_end_s):
        return None
    others = unseen_tokens(windows, own.t_start_s, own.t_end_s)
    return own_tokens / (own_tokens + others)
