"""`spectop demo --backend vllm|sglang --tune`: the whole loop on the simulated chip, as a user runs
it: the paired sweep, the schedule derived from it (drafting up to note 25's crossover at about
3.3 requests, off from 4), the scheduled and K = 0 servers started on the same chip with the
engine's own flags, the verification sweep, and the one closing line. By hand (the figures of
tests/collectors/sweep/test_schedule_check.py): over the demo's walk the schedule saves about 16 %
against always-draft and under 2 % against plain, so the line says "verified" with both positive."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli_runs import spectop

pytestmark = pytest.mark.slow  # two sweeps of simulated serving
LOAD_FLAGS = {"concurrency", "plain-drift", "short-window"}  # what a stalled client can cause


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_the_loop_ends_verified(backend: str, tmp_path) -> None:
    done = spectop(
        "demo",
        "--backend",
        backend,
        "--tune",
        "--speedup",
        "4",
        "--seed",
        "1",
        "--results",
        str(tmp_path),
        timeout_s=900,
    )
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.strip().splitlines()
    assert "schedule: B=1: K=4, B=2: K=4, B=4: off, B=8: off, B=16: off" in done.stdout
    runs = sorted(tmp_path.iterdir())
    assert len(runs) == 2  # the paired run and the verification run
    # the paired run's files keep the draft length the server reported of itself (vLLM's
    # num_speculative_tokens, SGLang's speculative_num_steps: 4), so `spectop tune` needs no flag for it
    servers = json.loads((runs[0] / "meta.json").read_text())["servers"]
    assert servers["draft"]["draft_tokens"] == 4 and "draft_tokens" not in servers["plain"]
    tuned = spectop("tune", str(runs[0]))
    assert tuned.returncode == 0, tuned.stderr
    assert "B=4" in tuned.stdout or "4" in tuned.stdout
    if lines[-1].startswith("not verified: no trustworthy"):
        # a loaded machine can leave a batch untrusted (a stalled client); only for those reasons
        untrusted = json.loads((runs[1] / "summary.json").read_text())["untrusted"]
        assert untrusted and all(set(u["because"]) <= LOAD_FLAGS for u in untrusted), untrusted
        assert done.returncode == 3
        return
    assert any(line.startswith("Scheduled power at B=8: ") for line in lines)
    assert any(line.startswith("K = 0 power at B=8: ") for line in lines)
    last = re.fullmatch(
        r"verified: the schedule saves (\d+\.\d) % against always-draft and (\d+\.\d) % against plain over this load",
        lines[-1],
    )
    assert last, lines[-1]
    assert 8 < float(last[1]) < 24 and 0 < float(last[2]) < 6
    assert done.returncode == 0


def test_llama_server_has_nothing_to_tune_in_one_line() -> None:
    done = spectop("demo", "--tune")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "spectop: demo --tune: llama-server has no setting that drafts by batch (use --backend vllm or "
        "sglang; on llama-server, route requests by batch with the proxy)"
    )
