"""A launched server's output, copied line by line into the log file spectop keeps for it, with its
secrets replaced (collectors/redact.py `scrub_text`): the key in its command, the value of every
secret-named variable in its environment, any `HF_TOKEN=…` or URL password it prints.

Why a copy and not the file as the server's stdout: a run folder is shared and kept, and servers
print their secrets (vLLM its arguments, a launcher script its environment). A line is copied at
most `MAX_LINE_BYTES` at a time, so a server that prints without newlines cannot grow spectop's
memory; the copy ends when the server closes its output (it exited, with its children).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

from collectors.redact import is_secret_name, scrub_text, secrets_in

MAX_LINE_BYTES = 1 << 16


def secrets_of(argv: Iterable[str], env: Mapping[str, str] | None) -> list[str]:
    """What a server started with `argv` in `env` (None: spectop's own) may print that is secret."""
    values = (env if env is not None else os.environ).items()
    return secrets_in(argv) + [value for name, value in values if value and is_secret_name(name)]


def copy_lines(source: IO[bytes], path: Path, secrets: list[str]) -> None:
    """Copy `source` into `path` (appended), each line scrubbed and flushed as it comes."""
    with source, open(path, "ab") as log:
        while line := source.readline(MAX_LINE_BYTES):
            text = line.decode("utf-8", errors="replace")
            log.write(scrub_text(text, secrets).encode("utf-8"))
            log.flush()


def start_copy(source: IO[bytes], path: Path, secrets: list[str], name: str) -> threading.Thread:
    thread = threading.Thread(
        target=copy_lines, args=(source, path, secrets), name=f"{name} log", daemon=True
    )
    thread.start()
    return thread
