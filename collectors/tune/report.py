"""What `spectop tune` prints and writes: the schedule table, the engine's form, the prediction.

Plain text (collectors/ has no UI library). The results folder gets `schedule.json` (the schedule,
the form and the prediction, read back by the dashboard and the exporter), the flags as a text file
and any file the flags name. Pitfall handled: a folder that cannot be written is one SpectopError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError
from collectors.fmt import num, pct, printable
from collectors.servers.schedule_form import ScheduleForm
from collectors.sweep.codec import from_json, to_json
from collectors.sweep.store import write_atomic
from collectors.tune.predict import Prediction
from collectors.tune.ranges import off_from
from collectors.tune.schedule import DraftSchedule

SCHEDULE_FILE = "schedule.json"


def schedule_lines(schedule: DraftSchedule) -> list[str]:
    band = pct(schedule.even_band)
    lines = [
        f"Drafting schedule from {printable(Path(schedule.source).name)} "
        f"(always-draft: {printable(schedule.always_arm)}, K = {schedule.always_k}"
        + (f"; class {printable(schedule.prompt_class)}" if schedule.prompt_class else "")
        + "):",
        f"  {'requests':>8}  {'K':>2}  {'arm':<10} {'mJ/token':>9} {'always-draft':>13} {'plain':>8}",
    ]
    for lv in schedule.levels:
        why = ""
        if not lv.trusted:
            why = "not measured trustworthily: " + (
                "off above the crossover" if lv.k == 0 else "always-draft kept"
            )
        elif lv.in_band:
            why = f"kept: within ±{band} of the cheapest"
        lines.append(
            f"  {lv.batch:>8}  {lv.k:>2}  {printable(lv.arm):<10} {num(lv.mj_per_token):>9} "
            f"{num(lv.always_mj_per_token):>13} {num(lv.plain_mj_per_token):>8}  {why}".rstrip()
        )
    cross = schedule.crossover
    if cross is not None:
        at = (
            f"≈ {cross.batch_at_1:.3g}"
            if cross.batch_at_1 is not None
            else f"at or below {cross.lowest_batch}"
        )
        low = f"{cross.band_low:.3g}" if cross.band_low is not None else f"≤ {cross.lowest_batch}"
        lines.append(
            f"Crossover {at} concurrent requests ({low}–{cross.band_high:.3g} within ±{band})"
            + (f"; drafting off from {off}." if (off := off_from(schedule)) else ".")
        )
    lines.append("A batch between two levels runs the level at or below it.")
    if schedule.left_out:
        lines.append(
            f"Left out (no draft length to schedule): {', '.join(map(printable, schedule.left_out))}."
        )
    return lines


def form_lines(form: ScheduleForm, flags_file: str | None) -> list[str]:
    version = form.version or "version not known"
    if form.refused:
        return [f"{form.engine} ({version}): cannot apply it: {form.refused}"]
    lines = [f"{form.engine} ({version}): add to the drafting server's command:", f"  {form.paste}"]
    if form.apply_with:
        lines += ["and run:", f"  {form.apply_with}"]
    if form.cannot:
        lines += [f"What {form.engine} cannot express, or does otherwise:"] + [
            f"  - {c}" for c in form.cannot
        ]
    if form.notes:
        lines += ["Notes:"] + [f"  - {n}" for n in form.notes]
    if flags_file:
        lines.append(f"(the flags are in {flags_file})")
    return lines


def prediction_lines(prediction: Prediction) -> list[str]:
    lines = [f"Predicted over the load ({printable(prediction.profile.source)}):"]
    for s in prediction.savings:
        verb = "saves" if s.fraction >= 0 else "costs"
        lines.append(
            f"  {verb} {pct(abs(s.fraction), 1)} ± {pct(s.error, 1)} against {s.against} "
            f"({s.compared_mj_per_token:.1f} → {s.scheduled_mj_per_token:.1f} mJ/token)"
        )
    note = "± two standard errors from the sweep's repeats"
    if prediction.single_repeat_cells:
        note += (
            f"; {prediction.single_repeat_cells} arm-batch cells had one point, where the ±5 % band stands in"
        )
    return lines + [f"  ({note}; the scheduled arm itself is not measured: spectop sweep --tune measures it)"]


def schedule_document(
    schedule: DraftSchedule, form: ScheduleForm, engine: str, prediction: Prediction | None
) -> dict[str, Any]:
    return {
        "schema": schedule.schema,
        "engine": engine,
        "version": form.version,
        "schedule": to_json(schedule),
        "form": to_json(form),
        "prediction": to_json(prediction) if prediction is not None else None,
    }


def read_schedule(path: Path) -> tuple[DraftSchedule, Mapping[str, Any]]:
    """A `schedule.json` (a file, or the results folder holding one): the schedule and the document."""
    path = path / SCHEDULE_FILE if path.is_dir() else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        schedule: DraftSchedule = from_json(DraftSchedule, data["schedule"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SpectopError(
            f"{path} is not a schedule spectop tune wrote ({exc})", "run spectop tune RESULTS"
        ) from exc
    return schedule, data


def write_files(run_dir: Path, document: Mapping[str, Any], form: ScheduleForm) -> list[Path]:
    """schedule.json, the flags as schedule-ENGINE.txt and the form's own files, in the results folder."""
    texts = {SCHEDULE_FILE: json.dumps(document, indent=2) + "\n"}
    if form.flags:
        texts[f"schedule-{document['engine']}.txt"] = form.paste + "\n"
    texts.update(form.files)
    written = []
    for name, text in texts.items():
        path = run_dir / name
        write_atomic(path, text)
        written.append(path)
    return written
