"""`spectop sweep`'s multi-arm options (seed 001's question: which drafting, for which traffic).

`--arm NAME=URL|NAME=CMD` (any number), `--draft-max 2,4,8,16` (an arm per draft length, from the
draft command) and `--ngram` (an arm from the plain command); any of them makes the sweep a
multi-arm one, whose `--prompts` may name classes (`code,prose,edit`, or a .jsonl with a "class").
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from collectors.sweep.arms import ArmSpec
from collectors.sweep.named_arms import make_named_arms
from collectors.sweep.plan import ArmsPlan, SweepPlan
from collectors.sweep.prompts import PromptSet, load_classes


def add_more_arm_options(parser: argparse.ArgumentParser) -> None:
    more = parser.add_argument_group(
        "more arms: which drafting for which traffic (any of these makes it a multi-arm sweep)"
    )
    more.add_argument(
        "--arm",
        action="append",
        metavar="NAME=URL|NAME=CMD",
        help="a named arm besides plain: a running server or a command (repeat for more)",
    )
    more.add_argument(
        "--draft-max",
        metavar="N,N,...",
        help="one arm per draft length (draft-N), each the draft command with --spec-draft-n-max N",
    )
    more.add_argument(
        "--tune",
        action="store_true",
        help="after a paired sweep, derive the schedule, start the draft command with it (and with "
        "K = 0 where the engine can: the arms scheduled and k0) and verify it over the walking load "
        "(needs --draft-cmd)",
    )
    more.add_argument(
        "--load",
        metavar="SPEC",
        help="with --tune, the load to verify over: token shares by batch (1:0.5,4:0.3,16:0.2), a "
        "recording, or ledger[:7d], as spectop tune --profile (default the demo's walk)",
    )
    more.add_argument(
        "--ngram",
        action="store_true",
        help="an n-gram arm: the plain command with --spec-type ngram-simple",
    )


def multi_arm(args: argparse.Namespace) -> bool:
    return bool(args.arm or args.draft_max or args.ngram)


def arms_plan(
    args: argparse.Namespace, build_plan: Callable[[argparse.Namespace, PromptSet], SweepPlan]
) -> tuple[ArmsPlan, tuple[ArmSpec, ...]]:
    """The plan and the arms (plain first) of a multi-arm sweep, from the command line."""
    classes = load_classes(args.prompts)
    base = build_plan(args, classes[0])
    named = [*(args.arm or []), *([f"draft={args.draft}"] if args.draft else [])]
    arms = make_named_arms(args.plain, args.plain_cmd, named, args.draft_cmd, args.draft_max, args.ngram)
    return ArmsPlan(base, tuple(a.name for a in arms[1:]), classes), arms
