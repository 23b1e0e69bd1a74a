"""A llama-server under `--spec-type ngram-simple` over one window, as its endpoints show it: the
drafts counter stays at 1 while two requests finish (tests/collectors/servers/test_llamacpp_ngram.py has
the hand calculation: steps 575, G 1.03, width 1.07).
"""

from __future__ import annotations

import copy
import re

from tests.support.captures import read_json, read_text
from tests.support.fault_server import FaultServer, Reply, Script

STEPS, ACCEPTED, DRAFTED = 575, 17, 40
G, WIDTH = 1 + ACCEPTED / STEPS, 1 + DRAFTED / STEPS


def metrics_page(tokens: int, drafted: int, accepted: int, drafts: int = 1) -> Reply:
    """The captured /metrics page with its finish-time counters set (the drafts counter at 1)."""
    text = read_text("draft-simple.metrics.before.txt")
    values = {
        "tokens_predicted_total": tokens,
        "spec_decode_num_draft_tokens_total": drafted,
        "spec_decode_num_accepted_tokens_total": accepted,
        "spec_decode_num_drafts_total": drafts,
    }
    for name, value in values.items():
        text = re.sub(rf"^llamacpp:{name} .*$", f"llamacpp:{name} {value}", text, flags=re.M)
    return Reply(text, content_type="text/plain; version=0.0.4")


def slots(busy: bool) -> Reply:
    """Two slots running tasks 11 and 12 (busy), or the same tasks finished (idle)."""
    rows = copy.deepcopy(read_json("draft-simple.slots.busy.json")[:2])
    for row, task, decoded in zip(rows, (11, 12), (100, 150)):
        row.update(id_task=task, is_processing=busy)
        row["params"]["speculative.types"] = "ngram-simple"
        row["next_token"][0]["n_decoded"] = decoded if busy else 0
    return Reply(rows)


def ngram_server() -> FaultServer:
    before, after = metrics_page(1000, 200, 90), metrics_page(1000 + 594, 200 + DRAFTED, 90 + ACCEPTED)
    # each poll reads /metrics twice (before and after /slots): the first poll sees `before`
    return FaultServer(
        {"/metrics": Script(before, before, after), "/slots": Script(slots(True), slots(False))}
    )
