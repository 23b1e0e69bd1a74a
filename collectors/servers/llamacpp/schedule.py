"""llama-server's form of a drafting schedule: two servers and spectop's routing proxy.

llama-server has no per-request or per-batch draft length: on build 11434 `speculative.n_max: 0`,
`{"speculative": {"n_max": 0}}` and `speculative.types: "none"` in a /completion body are
accepted and ignored (the same drafted and accepted counts). So the switch is two servers, one
plain and one drafting, and `spectop --proxy PORT --route-by-batch B` sends each new request to the
drafting one while the batch it joins is below B and to plain from B on. That applies a schedule
of one threshold with one draft length; anything else is said as what the routing will do.
"""

from __future__ import annotations

from collections.abc import Sequence

from collectors.servers.schedule_form import DialectSchedule, ScheduleForm, flag_value, whole
from collectors.tune.ranges import k_ranges, main_k, off_from, one_threshold
from collectors.tune.schedule import DraftSchedule

# the draft-length flag of the pinned build and the removed ones older commands carry
LENGTH_FLAGS = frozenset({"--spec-draft-n-max", "--draft-max", "--draft", "--draft-n"})


class LlamaCppSchedule(DialectSchedule):
    engine_names = ("llama", "llama.cpp", "llama-server")

    @classmethod
    def draft_tokens_in(cls, argv: Sequence[str]) -> int | None:
        return whole(flag_value(argv, LENGTH_FLAGS))

    @classmethod
    def render_schedule(cls, schedule: DraftSchedule, version: str | None) -> ScheduleForm:
        threshold = off_from(schedule)
        if threshold is None:
            return ScheduleForm(
                "llama-server",
                version,
                refused="the schedule never turns drafting off above some batch, so there is nothing to route: "
                + ("run the drafting server alone" if schedule.max_k else "run the plain server alone"),
            )
        k = main_k(schedule)
        cannot = [
            "llama-server cannot change its draft length per request or per batch (build 11434 "
            "ignores speculative.n_max in a request body): the schedule is applied by routing "
            "between a plain and a drafting server",
            "a request stays on the server it was sent to while the batch changes under it",
        ]
        others = sorted({r.k for r in k_ranges(schedule)[:-1]} - {k})
        if others:
            cannot.append(
                f"one drafting server runs one draft length: levels scheduled at K = {others} run at K = {k}"
            )
        if not one_threshold(schedule):
            cannot.append(
                f"drafting off below {threshold} is not routed: every batch below {threshold} drafts"
            )
        notes = (
            f"start the drafting server with --spec-draft-n-max {k} and the plain one without the "
            "speculative flags; point clients at the proxy",
            "it costs a second server: the target model is loaded twice (plus the draft), so it is "
            "worth it where memory allows and the load often crosses the crossover",
            "K = 0 here is the plain server itself: no speculative overhead",
        )
        return ScheduleForm(
            "llama-server",
            version,
            flags=("--route-by-batch", str(threshold)),
            cannot=tuple(cannot),
            notes=notes,
            apply_with=f"spectop --proxy PORT --route-by-batch {threshold} --plain PLAIN_URL --draft DRAFT_URL",
            k_by_batch={level.batch: (0 if level.batch >= threshold else k) for level in schedule.levels},
        )
