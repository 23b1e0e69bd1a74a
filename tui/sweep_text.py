"""The sweep's summary in words, shared by the App's notification and the sweep tab; pure, no Textual."""

from __future__ import annotations

from collectors.sweep.records import PairedSummary, Summary


def sweep_headline(record: Summary) -> str:
    """One line for a notification: the recommendation, or the best arm per class by energy."""
    if isinstance(record, PairedSummary):
        return record.recommendation
    batches = len({v.batch for v in record.verdicts}) > 1
    best = [
        v.prompt_class + (f" B={v.batch}" if batches else "") + f" {v.best_energy}"
        for v in record.verdicts
        if v.plain_trusted
    ]
    return "best by energy: " + ", ".join(best) if best else "no trustworthy plain point: no arm compared"
