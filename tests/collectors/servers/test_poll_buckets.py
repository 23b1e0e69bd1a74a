"""A poll parses only the histogram buckets its dialect reads (most of a serving engine's page);
every other series reads as it does from the whole page. On the simulator's pages of each dialect,
which carry the engines' real histograms (vLLM's: 250 of its 393 lines are buckets)."""

from __future__ import annotations

import httpx
import pytest

from collectors.servers import registry
from collectors.servers.answers import parse_metrics
from collectors.simulator import Simulator


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_a_poll_reads_every_series_but_the_buckets_it_does_not_use(backend: str) -> None:
    with Simulator(seed=3, speedup=20, backend=backend) as sim:
        page = httpx.get(f"{sim.draft_url}/metrics", timeout=30).text
    keep = registry.dialect(backend).read_buckets
    whole, read = parse_metrics(page), parse_metrics(page, keep)
    buckets = {name for name in whole if name.endswith("_bucket")}
    assert buckets, "the simulator's page has histograms"
    assert read == {name: rows for name, rows in whole.items() if name not in buckets or name[:-7] in keep}
