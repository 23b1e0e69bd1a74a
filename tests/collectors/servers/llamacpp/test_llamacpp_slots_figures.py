"""llama-server's /slots between two polls: tokens generated and requests finished, counted by hand."""

from __future__ import annotations

from collectors.servers.llamacpp.slots import SlotState, finished_requests, generated_tokens, slot_states


def busy(slot_id: int, task: int, decoded: int) -> SlotState:
    return SlotState(slot_id, task, decoded, True)


def idle(slot_id: int, task: int | None) -> SlotState:
    return SlotState(slot_id, task, 0, False)


def test_slot_states_read_both_next_token_forms_and_idle_slots():
    slots = [
        {"id": 3, "id_task": 7, "is_processing": True, "next_token": {"n_decoded": 12}},  # older builds
        {"id": 4, "id_task": 8, "is_processing": True, "next_token": [{"n_decoded": 5}]},
        {"id": 5, "id_task": -1, "is_processing": False},  # never used: no next_token
    ]
    assert slot_states(slots) == {3: busy(3, 7, 12), 4: busy(4, 8, 5), 5: SlotState(5, -1, 0, False)}


def by_id(*states: SlotState) -> dict[int, SlotState]:
    return {s.slot_id: s for s in states}


def test_tokens_of_every_running_and_finished_slot_are_added():
    before = by_id(busy(0, 1, 10), busy(1, 2, 20), busy(2, 3, 30), busy(3, 4, 40), busy(4, 5, 7))
    after = by_id(
        busy(0, 1, 15),  # still running: +5
        busy(1, 2, 26),  # still running: +6
        idle(2, 3),  # finished: 30 of it seen
        busy(3, 9, 4),  # 4 finished (40 seen), 9 began: 4 so far
        busy(4, 5, 7),  # stalled: +0
        busy(6, 11, 3),  # a slot that was not there before: 3 so far
    )
    # finished requests 3 and 4 generated 80 in all, 70 of them already seen: 10 more
    assert generated_tokens(before, after, 80, True) == (5 + 6 + 4 + 3 + 10, True)
    assert generated_tokens(before, after, None, True) == (5 + 6 + 4 + 3, False)  # no counter: running only
    assert generated_tokens(None, after, 80, True) == (80, False)  # no /slots: finished only
    assert generated_tokens(before, None, 80, True) == (80, False)


def test_finished_requests_of_several_slots_add_up():
    before = by_id(busy(0, 1, 10), busy(1, 2, 20), busy(2, 3, 5))
    after = by_id(idle(0, 1), idle(1, 2), busy(2, 3, 9))
    assert finished_requests(before, after) == (2, True)
    assert finished_requests(None, after) == (None, False)
    assert finished_requests(before, None) == (None, False)


def test_every_slot_whose_task_changed_finished_one():
    before = by_id(busy(0, 1, 10), busy(1, 2, 20))
    after = by_id(busy(0, 5, 1), busy(1, 6, 2))
    assert finished_requests(before, after) == (2, False)  # and maybe more, run entirely between the polls
