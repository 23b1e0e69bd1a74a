"""llama-server's /slots between two polls: tokens generated in the window, requests that finished.

Pitfalls handled (collectors/docs/servers.md, llama-server): the token and spec counters move only
when a request finishes, so in-flight tokens come from the slots' `n_decoded`, which drops to 0
when a slot is released; a slot keeps its last `id_task` while idle, so a changed task id is the
only sign that a request ended and another began. Neither tells of a request that started and
finished between two polls: counting finished requests is then a lower bound (`exact` False).
Without /slots (`--no-slots`) only finished requests are counted: live tokens are a lower bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SlotState:
    slot_id: int
    task_id: int | None
    n_decoded: int
    busy: bool


def slot_states(slots: Sequence[Mapping[str, Any]] | None) -> dict[int, SlotState]:
    """Each slot's task, tokens decoded so far and whether it is busy, by slot id."""
    states = {}
    for slot in slots or []:
        next_token = slot.get("next_token") or [{}]
        if isinstance(next_token, dict):  # older builds sent an object, this one a 1-element array
            next_token = [next_token]
        states[int(slot["id"])] = SlotState(
            slot_id=int(slot["id"]),
            task_id=slot.get("id_task"),
            n_decoded=int(next_token[0].get("n_decoded") or 0),
            busy=bool(slot.get("is_processing")),
        )
    return states


def generated_tokens(
    before: Mapping[int, SlotState] | None,
    after: Mapping[int, SlotState] | None,
    finished_tokens: int | None,
    finished_exact: bool,
) -> tuple[int | None, bool]:
    """Tokens generated between two polls, and whether the count is exact (else a lower bound).

    Running slots give their `n_decoded` growth; requests that finished in between are completed
    from the finished-token counter's growth (`finished_tokens`) minus what was already seen of
    them. Without /slots on both polls only finished requests count; without the counter, only
    running ones. None when neither is known.
    """
    if before is None or after is None:
        return finished_tokens, False
    generated = seen_of_finished = 0
    for slot_id, now in after.items():
        was = before.get(slot_id)
        if was is not None and was.busy and now.busy and was.task_id == now.task_id:  # the same task
            generated += max(0, now.n_decoded - was.n_decoded)
            continue
        if was is not None and was.busy:
            seen_of_finished += was.n_decoded
        if now.busy:
            generated += now.n_decoded
    if finished_tokens is None:
        return generated, False
    return generated + max(0, finished_tokens - seen_of_finished), finished_exact


def finished_requests(
    before: Mapping[int, SlotState] | None, after: Mapping[int, SlotState] | None
) -> tuple[int | None, bool]:
    """Requests that finished between two polls, and whether that count is exact.

    A busy slot that went idle on the same task finished it; a slot whose task changed finished
    the one it was running, and the new one if it is idle now, but may also have run others
    entirely between the polls, which nothing shows: then the count is a lower bound.
    """
    if before is None or after is None:
        return None, False
    count, exact = 0, True
    for slot_id, now in after.items():
        was = before.get(slot_id)
        if was is not None and was.task_id == now.task_id:
            count += was.busy and not now.busy
            continue
        exact = False
        if was is not None and was.busy:
            count += 1
        if now.task_id is not None and not now.busy:
            count += 1
    return count, exact
