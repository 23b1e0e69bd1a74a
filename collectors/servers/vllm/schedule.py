"""vLLM's form of a drafting schedule: `num_speculative_tokens_per_batch_size` in `--speculative-config`.

As vLLM 0.33.0 reads it (vllm/config/speculative.py:524, vllm/v1/spec_decode/dynamic/utils.py):
a list of inclusive (first batch, last batch, K) ranges, each positive with first <= last
(utils.py:43-52), K >= 0 (utils.py:53-56), not overlapping (utils.py:61-65), the first starting at
1 (utils.py:67-72); a gap carries the previous K forward and the tail the last K (utils.py:102-127,
131-137 of the dense lookup), and every K is capped at `num_speculative_tokens` (utils.py:113-125),
so that is set to the schedule's largest K. The scheduler looks K up by the number of requests
scheduled in the step (vllm/v1/core/sched/scheduler.py:1711-1714). The field first appears in
0.24.0 (vllm/config/speculative.py:162 there; 0.23.0 has none). Releases drop it with a warning
only, so those cases are said as what the engine will do, not refused outright.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from collectors.servers.schedule_form import DialectSchedule, ScheduleForm, flag_value, whole
from collectors.servers.vllm.advice import version as release_of
from collectors.tune.ranges import k_ranges
from collectors.tune.schedule import DraftSchedule

FIRST_RELEASE = (0, 24)  # the first release with num_speculative_tokens_per_batch_size
CHECKED_RELEASE = "0.33.0"  # the release whose source the form and notes were checked against
V1_METHODS = ("ngram", "eagle", "eagle3", "mtp", "draft_model", "dflash")  # config/vllm.py:1096


def speculative_config(schedule: DraftSchedule) -> dict[str, object]:
    """The two fields to merge into the server's `--speculative-config` (its method and model kept)."""
    return {
        "num_speculative_tokens": schedule.max_k,
        "num_speculative_tokens_per_batch_size": [[r.first, r.last, r.k] for r in k_ranges(schedule)],
    }


class VllmSchedule(DialectSchedule):
    engine_names = ("vllm",)

    @classmethod
    def draft_tokens_in(cls, argv: Sequence[str]) -> int | None:
        text = flag_value(argv, frozenset({"--speculative-config", "-sc"}))
        try:
            config = json.loads(text) if text else None
        except ValueError:
            config = None
        if isinstance(config, dict) and isinstance(config.get("num_speculative_tokens"), int):
            return int(config["num_speculative_tokens"])
        return whole(flag_value(argv, frozenset({"--num-speculative-tokens", "--spec-tokens"})))

    @classmethod
    def render_schedule(cls, schedule: DraftSchedule, version: str | None) -> ScheduleForm:
        release = release_of(version)
        shown = version or f"{CHECKED_RELEASE} (the sweep did not say which)"
        if release is not None and release < FIRST_RELEASE:
            return ScheduleForm(
                "vLLM",
                version,
                refused=(
                    f"vLLM {version} has no num_speculative_tokens_per_batch_size (it first "
                    "appears in 0.24.0): upgrade, or run without --speculative-config above "
                    f"{_off_text(schedule)}"
                ),
            )
        if schedule.max_k == 0:
            return ScheduleForm(
                "vLLM", version, refused="the schedule drafts at no batch: run without --speculative-config"
            )
        config = speculative_config(schedule)
        notes = [
            f"written for vLLM {shown}: ranges inclusive, the first from 1, a gap and the tail keep the "
            "previous K (vllm/v1/spec_decode/dynamic/utils.py:43-137 in 0.33.0)",
            "merge the two fields into your --speculative-config, keeping its method and model; "
            "num_speculative_tokens is the largest K (each range's K is capped at it)",
            "the batch vLLM looks K up by is the requests scheduled in a step, prefills included "
            "(vllm/v1/core/sched/scheduler.py:1711-1714)",
            "K = 0 keeps the draft loaded and the scheduler's speculative path on: it is not plain "
            "decoding, so measure the scheduled arm (spectop sweep --tune)",
        ]
        cannot = [
            "under data parallelism (--data-parallel-size > 1) vLLM drops the schedule with a "
            "warning and drafts num_speculative_tokens at every batch (vllm/config/vllm.py:1110-1127)",
            "on the V1 model runner it drops the schedule for methods other than "
            f"{', '.join(V1_METHODS)} (vllm/config/vllm.py:1088-1108), and turns a full CUDA-graph "
            "mode into PIECEWISE, which costs time at every batch (vllm/config/vllm.py:1069-1086)",
        ]
        if release is not None and release < (0, 33):
            cannot.append(
                f"{version} may not check data parallelism (0.24.0 does not; ranks can then "
                "pick different K and stall): run it with data parallel size 1"
            )
        return ScheduleForm(
            "vLLM",
            version,
            flags=("--speculative-config", json.dumps(config, separators=(", ", ": "))),
            cannot=tuple(cannot),
            notes=tuple(notes),
            k_by_batch={level.batch: min(level.k, schedule.max_k) for level in schedule.levels},
        )


def _off_text(schedule: DraftSchedule) -> str:
    ranges = k_ranges(schedule)
    zero = [r for r in ranges if r.k == 0]
    return f"{zero[0].first - 1} concurrent requests" if zero else "the crossover"
