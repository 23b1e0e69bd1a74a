"""SGLang's form of a drafting schedule: `--speculative-adaptive` with a config file of one-step slots.

As SGLang 0.5.23 reads it (sglang/srt/speculative/adaptive_spec_params.py): the config is a JSON
object whose integer-string keys are batch sizes, each with `candidate_steps`, a non-empty list of
non-negative ints (lines 116-138); a batch is padded up to the next CUDA-graph batch size, then
served by the slot at or below it, the first below all (lines 342-358). Each slot adapts its step
count on acceptance, an EMA of accepted drafts (lines 187-261), never on energy; a slot with one
candidate has nothing to move to (lines 213-251 only move between candidates), so a slot per
schedule range pins that range's K. Steps are the draft length: topk is 1 and draft tokens are
steps + 1 (sglang/srt/arg_groups/speculative_hook.py:1402-1427), and `--speculative-num-steps`
must be one of the candidates (the same lines). Adaptive runs only for EAGLE/EAGLE3 at topk 1
without attention DP, multi-layer EAGLE, two-batch overlap or PD multiplexing
(adaptive_spec_params.py:56-100); otherwise it is dropped with a warning
(speculative_hook.py:1374-1389).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from collectors.servers.schedule_form import DialectSchedule, ScheduleForm, flag_value, whole
from collectors.tune.ranges import k_ranges
from collectors.tune.schedule import DraftSchedule

CHECKED_RELEASE = "0.5.23"
CONFIG_FILE = "sglang-adaptive.json"


def adaptive_config(schedule: DraftSchedule) -> dict[str, dict[str, list[int]]]:
    """One slot per run of one K, keyed by its first batch, with that K as its only candidate."""
    return {str(r.first): {"candidate_steps": [r.k]} for r in k_ranges(schedule)}


class SglangSchedule(DialectSchedule):
    engine_names = ("sglang",)

    @classmethod
    def draft_tokens_in(cls, argv: Sequence[str]) -> int | None:
        return whole(flag_value(argv, frozenset({"--speculative-num-steps"})))

    @classmethod
    def render_schedule(cls, schedule: DraftSchedule, version: str | None) -> ScheduleForm:
        if schedule.max_k == 0:
            return ScheduleForm(
                "SGLang",
                version,
                refused="the schedule drafts at no batch: run without --speculative-* flags",
            )
        ranges = k_ranges(schedule)
        shown = version or f"{CHECKED_RELEASE} (the sweep did not say which)"
        flags = (
            "--speculative-adaptive",
            "--speculative-adaptive-config",
            CONFIG_FILE,
            "--speculative-num-steps",
            str(ranges[0].k),
            "--speculative-eagle-topk",
            "1",
        )
        between = [
            f"{r.first - 1}" for r in ranges[1:] if r.first - 1 > 1 and r.first - 1 not in schedule.batches
        ]
        cannot = [
            "SGLang adapts a slot's steps on acceptance, not energy; each slot here has one "
            "candidate, so it holds the schedule's K at the measured levels exactly",
            "SGLang pads a batch up to the next CUDA-graph batch size before choosing a slot "
            "(adaptive_spec_params.py:342-354): a batch just below a range's start that pads into "
            "it runs that range's K"
            + (f" (e.g. batch {between[0]} where {int(between[0]) + 1} is captured)" if between else ""),
            "adaptive runs only for EAGLE or EAGLE3 at topk 1 without attention DP; a draft-model "
            "(STANDALONE) or n-gram server drops it with a warning and drafts its static steps "
            "(adaptive_spec_params.py:56-100)",
        ]
        notes = (
            f"written for SGLang {shown}; save the config as {CONFIG_FILE} (spectop tune writes it) "
            "and drop --speculative-num-draft-tokens: SGLang sets it to steps + 1",
            "K = 0 skips the draft but still runs the draft model's extend step to keep its cache "
            "warm (sglang/srt/speculative/eagle_worker_v2.py:1469-1491): it is not plain decoding, "
            "so measure the scheduled arm (spectop sweep --tune)",
        )
        return ScheduleForm(
            "SGLang",
            version,
            flags=flags,
            files={CONFIG_FILE: json.dumps(adaptive_config(schedule), indent=2) + "\n"},
            cannot=tuple(cannot),
            notes=notes,
            k_by_batch={level.batch: level.k for level in schedule.levels},
        )
