"""A launched server's log, as spectop keeps it in the run folder, holds none of its secrets: not the
key in its command, not a secret-named variable of its environment (printed bare or as NAME=…), not
a URL's password; everything else it printed is there, in order."""

from __future__ import annotations

import os
import sys

import pytest

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess
from collectors.launch.log_copy import copy_lines

KEY = "sk-in-the-command-77"
HF = "hf_in-the-environment-99"
PRINTS = f"""
import os, sys
print("starting", sys.argv[1:])
print(os.environ["HF_TOKEN"])
print("env: HF_TOKEN=" + os.environ["HF_TOKEN"], flush=True)
print("non-default args: {{'api_key': '{KEY}', 'max_tokens': 16}}")
print("model from http://user:pa55word@hub.local/m")
print("x" * 300000, end="")  # a line with no end, longer than a line is read at a time
sys.exit(4)
"""


def test_a_dying_server_log_in_the_run_folder_is_scrubbed(tmp_path):
    log = tmp_path / "draft-server-1.log"
    env = {**os.environ, "HF_TOKEN": HF}
    argv = [sys.executable, "-c", PRINTS, "--api-key", KEY, "--port", "9"]
    with pytest.raises(SpectopError) as died:
        ServerProcess(argv, url="http://127.0.0.1:9", log_path=log, env=env, name="draft server").start()
    text = log.read_text(encoding="utf-8")
    for secret in (KEY, HF, "pa55word"):
        assert secret not in text and secret not in str(died.value)
    lines = text.splitlines()
    assert lines[0] == "starting ['--api-key', '***', '--port', '9']"
    assert lines[1:5] == [
        "***",
        "env: HF_TOKEN=***",
        "non-default args: {'api_key': '***', 'max_tokens': 16}",
        "model from http://user:***@hub.local/m",
    ]
    assert lines[5] == "x" * 300000  # copied whole, a piece at a time
    assert "exited with code 4" in str(died.value)


def test_the_copy_ends_with_its_source(tmp_path):
    read, write = os.pipe()
    os.write(write, b"one\ntwo")
    os.close(write)
    copy_lines(os.fdopen(read, "rb"), tmp_path / "log", ["two"])
    assert (tmp_path / "log").read_text() == "one\n***"
