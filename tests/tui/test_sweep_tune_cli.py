"""`spectop sweep --tune` needs a draft command to start the scheduled server from: anything else is
one clear line before anything is measured (the loop itself runs in tests/tui/test_demo_tune.py)."""

from __future__ import annotations

import pytest

from tests.support.cli_runs import one_line, spectop


@pytest.mark.parametrize(
    "arms",
    [
        ["--plain", "http://127.0.0.1:9", "--draft", "http://127.0.0.1:10"],
        [
            "--draft-cmd",
            "llama-server -m t.gguf -md d.gguf --spec-type draft-simple",
            "--arm",
            "x=http://127.0.0.1:9",
        ],
    ],
)
def test_tune_without_a_draft_command_is_one_line(arms: list[str], tmp_path) -> None:
    done = spectop("sweep", "--tune", *arms, "--results", str(tmp_path))
    assert done.returncode == 2
    assert one_line(done.stderr).startswith(
        "spectop: --tune starts the scheduled server from the draft command of a paired sweep (give --draft-cmd"
    )
    assert not any(tmp_path.iterdir())  # nothing measured, no run folder


def test_load_without_tune_is_one_line(tmp_path) -> None:
    done = spectop(
        "sweep", "--load", "1:0.5,16:0.5", "--plain", "http://127.0.0.1:9", "--draft", "http://127.0.0.1:10"
    )
    assert done.returncode == 2
    assert (
        one_line(done.stderr) == "spectop: --load is the load --tune verifies the schedule over (add --tune)"
    )
