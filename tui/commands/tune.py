"""`spectop tune RESULTS`: the drafting schedule a finished sweep implies, in the engine's own form.

Derives the lowest-energy draft length per batch (collectors/tune/derive.py), writes it as the
engine's setting for the version the sweep saw (`--engine`, `--version` override; the dialects'
schedule.py), says what the engine cannot express, and predicts the saving over a load profile
with its uncertainty (collectors/tune/predict.py). Everything goes to the results folder too:
schedule.json, which the dashboard and the exporter read back, and the flags to paste.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from collectors.errors import SpectopError
from collectors.servers import registry
from collectors.tune.derive import derive_schedule
from collectors.tune.predict import cell_spreads, predict
from collectors.tune.profile import even, load_profile
from collectors.tune.report import (
    form_lines,
    prediction_lines,
    schedule_document,
    schedule_lines,
    write_files,
)
from tui.commands import _common as opts

NAME = "tune"
HELP = "the drafting schedule a sweep implies, as the engine's own setting, and what it saves"
DESCRIPTION = (
    "From a finished sweep (paired or multi-arm): the draft length with the lowest energy per token "
    "at each batch (off above the crossover; decisions within the ±5 % band left as always-draft had "
    "them), the flags or config to paste for the engine and version the sweep saw, what that engine "
    "cannot express, and the saving predicted over a load profile with its uncertainty."
)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RESULTS", help="a folder written by spectop sweep")
    parser.add_argument(
        "--engine",
        metavar="NAME",
        help=f"the engine to write the setting for: {', '.join(registry.engine_names())} "
        "(default: the sweep's server)",
    )
    parser.add_argument(
        "--version", metavar="X", help="the engine's release (default: what the sweep's server reported)"
    )
    parser.add_argument(
        "--profile",
        metavar="FILE|ledger[:7d]|B:SHARE,...",
        help="the load to predict the saving over: a recording (--record FILE), the energy ledger's "
        "last days, or token shares by batch such as 1:0.5,4:0.3,16:0.2 (default: each measured batch alike)",
    )
    parser.add_argument(
        "--draft-tokens",
        type=opts.whole("--draft-tokens", 1, 256, 4),
        metavar="N",
        help="a paired sweep's draft length, where its draft arm's command does not say it",
    )
    parser.add_argument(
        "--class", dest="prompt_class", metavar="NAME", help="a multi-arm sweep's prompt class"
    )
    parser.add_argument("--ledger", type=Path, metavar="PATH", help="the ledger --profile ledger reads")


def run(args: argparse.Namespace) -> int:
    schedule = derive_schedule(args.run_dir, draft_tokens=args.draft_tokens, prompt_class=args.prompt_class)
    engine_name = args.engine or schedule.backend
    if engine_name is None:
        raise SpectopError(
            "the sweep does not say which engine it measured",
            f"give --engine {' or '.join(registry.engine_names())}",
        )
    dialect = registry.engine(engine_name)
    same_engine = schedule.backend is not None and registry.find(schedule.backend) is dialect
    version = args.version or (schedule.build if same_engine else None)
    form = registry.render_schedule(engine_name, schedule, version)
    profile = load_profile(args.profile, args.ledger) if args.profile else even(schedule.batches)
    cells = cell_spreads(args.run_dir, schedule.prompt_class, schedule.even_band)
    try:
        prediction = predict(schedule, profile, cells)
    except ValueError as exc:
        raise SpectopError(f"cannot predict the saving: {exc}", "re-run the sweep") from exc
    flags_file = f"schedule-{dialect.engine_names[0]}.txt" if form.flags else None
    document = schedule_document(schedule, form, dialect.engine_names[0], prediction)
    written = write_files(args.run_dir, document, form)
    lines = (
        schedule_lines(schedule) + [""] + form_lines(form, flags_file) + [""] + prediction_lines(prediction)
    )
    lines.append(f"Written: {', '.join(p.name for p in written)} in {args.run_dir}")
    print("\n".join(lines))
    return 0
