"""`spectop demo --serve-only --k0 --arm scheduled=FLAGS`: more simulated servers on the same chip,
started with their engine's own flags, each answering as that engine does with them."""

from __future__ import annotations

import json
import signal

import httpx
import pytest

from tests.support.cli_runs import spectop, spectop_popen
from tests.support.processes import reaped

pytestmark = pytest.mark.slow  # `spectop demo` in a subprocess

SCHEDULE = [[1, 3, 4], [4, 256, 0]]


def test_vllm_arms_report_their_schedule_and_k0_its_zeros() -> None:
    config = json.dumps(
        {
            "method": "draft_model",
            "num_speculative_tokens": 4,
            "num_speculative_tokens_per_batch_size": SCHEDULE,
        }
    )
    demo = spectop_popen(
        "demo",
        "--backend",
        "vllm",
        "--serve-only",
        "--k0",
        "--arm",
        f"scheduled=--speculative-config '{config}'",
    )
    with reaped(demo) as proc:
        assert proc.stdout is not None
        urls = dict(proc.stdout.readline().split() for _ in range(5))
        assert list(urls) == ["plain", "draft", "meter", "scheduled", "k0"]
        with httpx.Client(timeout=10) as client:
            spec = {
                name: client.get(f"{urls[name]}/server_info?config_format=json").json()["vllm_config"][
                    "speculative_config"
                ]
                for name in ("scheduled", "k0")
            }
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=10)
    assert spec["scheduled"]["num_speculative_tokens_per_batch_size"] == SCHEDULE
    # K = 0 at every batch up to max_num_seqs (16 slots): vLLM's num_speculative_tokens stays > 0
    assert spec["k0"]["num_speculative_tokens"] == 4
    assert spec["k0"]["num_speculative_tokens_per_batch_size"] == [[1, 16, 0]]


def test_a_schedule_the_engine_refuses_is_one_clear_line() -> None:
    config = json.dumps({"num_speculative_tokens": 4, "num_speculative_tokens_per_batch_size": [[2, 8, 4]]})
    done = spectop(
        "demo", "--backend", "vllm", "--serve-only", "--arm", f"scheduled=--speculative-config '{config}'"
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "spectop: demo: arm scheduled: The first batch-size range must start at 1 so every runtime batch size "
        "has a defined schedule. (see spectop demo --help for the arms' flags)"
    )
    on_llama = spectop("demo", "--serve-only", "--k0")
    assert (
        on_llama.returncode == 2
        and "no K = 0 setting" in on_llama.stderr
        and "Traceback" not in on_llama.stderr
    )
