"""Every server spectop starts ends with spectop: stopped on exit, on SIGTERM/SIGHUP, and killed with it.

Pitfalls handled:

- **The parent-death signal follows a thread, not the process.** Linux's PR_SET_PDEATHSIG
  (prctl(2)) fires when the *thread* that forked the child ends, not when the process does. A
  server forked from a short-lived thread (the dashboard's sweep worker) would be killed when the
  sweep's thread ends, and one forked without it (as before) outlived a SIGKILLed spectop with PPID
  1. So every server is forked from one long-lived launcher thread (`spawn`), which lives as long
  as the process: the signal comes exactly when spectop dies, SIGKILL included.
- **Signal handlers only install from the main thread.** A server started from a worker thread
  cannot install the SIGTERM/SIGHUP hooks itself; a front end that starts servers from workers
  (the dashboard) installs them up front with `on_terminate`, and the headless commands get them
  on the first start (`install_hooks`, only where nobody installed a handler before).
- **A closed terminal is SIGHUP.** The servers run in their own session and would not hear it.
"""

from __future__ import annotations

import atexit
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from collectors.errors import SpectopError

T = TypeVar("T")
TERMINATING = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)


class Stoppable(Protocol):
    def stop(self, timeout_s: float = 10.0) -> int | None: ...


_RUNNING: set[Stoppable] = set()
_RUNNING_LOCK = threading.Lock()
_HOOKS_INSTALLED = False
QUICK_STOP_S = 3.0  # on SIGTERM/SIGHUP: a server keeping idle keep-alive connections open lingers


def register(server: Stoppable) -> None:
    with _RUNNING_LOCK:
        _RUNNING.add(server)


def unregister(server: Stoppable) -> None:
    with _RUNNING_LOCK:
        _RUNNING.discard(server)


def stop_all(timeout_s: float = 10.0) -> None:
    """Stop every server this process started and has not stopped yet (SIGKILL after `timeout_s`)."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for server in running:
        server.stop(timeout_s)


def _find_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PRCTL = _find_prctl()  # resolved here, so the child between fork and exec only makes one call


def die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the launcher thread ends, i.e. when spectop dies."""
    PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class _Launcher:
    """One daemon thread that runs every fork, started on first use and never ended."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.closing = False  # spectop is stopping: no new server

    def run(self, job: Callable[[], T]) -> T:
        if self.closing:
            raise SpectopError("spectop is stopping: no server is started now")
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="spectop-launcher", daemon=True)
                self._thread.start()
        done: Future[T] = Future()
        self._jobs.put((job, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                done.set_result(job())
            except BaseException as exc:  # handed to the caller's thread, which raises it
                done.set_exception(exc)


_LAUNCHER = _Launcher()


def spawn(job: Callable[[], T]) -> T:
    """Run `job` (which forks a server and registers it) on the launcher thread; its result or error."""
    return _LAUNCHER.run(job)


def _raise_exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through `with` blocks and runs atexit


def install_hooks() -> None:
    """atexit always; SIGTERM/SIGHUP → SystemExit handlers only where nobody installed one before."""
    global _HOOKS_INSTALLED
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED = True
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        for sig in TERMINATING:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, _raise_exit)


@contextmanager
def on_terminate(then: Callable[[int], None]) -> Iterator[None]:
    """While inside: SIGTERM and SIGHUP stop every server this process started, then call
    `then(signum)` so the front end can exit cleanly. Both run on a thread of their own, off the
    signal handler (stopping waits for the servers). Call it from the main thread."""
    install_hooks()

    def handler(signum: int, frame: object) -> None:
        def stop_then() -> None:
            _LAUNCHER.closing = True  # a sweep still running must not start a server now
            stop_all(QUICK_STOP_S)
            then(signum)

        threading.Thread(target=stop_then, name="spectop-terminate", daemon=True).start()

    previous = {sig: signal.signal(sig, handler) for sig in TERMINATING}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
