"""The capture proxy served on a port: `--proxy [HOST:]PORT` read, uvicorn run on its own loop.

Pitfalls handled: loopback unless a host is named (a proxy open to the network would pass anyone's
requests to the server with the user's key); a bad spec or a port already taken is one line naming
`--proxy` and the fix, said before the dashboard starts (`check_port`); the proxy runs on its own
thread and event loop, so the dashboard's repaints never delay a forwarded chunk; uvicorn logs
nothing (its access log would print on the dashboard's screen) and adds no Server or Date header
of its own (the server's pass through); on stop, requests still streaming get `GRACE_S` to end,
then are cancelled, which cancels their upstream requests. Routed (`route`, a RoutePlan), the
servers' busy slots are polled on the proxy's loop beside it (collectors/requests/router.py).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType

import uvicorn

from collectors.errors import SpectopError
from collectors.requests.listen import PROXY_FIX, ListenAddress, bind
from collectors.requests.proxy import CaptureProxy
from collectors.requests.proxy_guard import GuardedH11Protocol
from collectors.requests.record import RequestRecord
from collectors.requests.router import BatchRouter, RoutePlan, poll_busy

GRACE_S = 1  # seconds (uvicorn takes whole seconds)
STOP_POLL_S = 0.1


def _quiet() -> None:
    # uvicorn's loggers would otherwise fall through to Python's last-resort handler on stderr
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.propagate = False
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())


def make_server(app: CaptureProxy) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
        proxy_headers=False,
        ws="none",
        timeout_graceful_shutdown=GRACE_S,
        http=GuardedH11Protocol,  # bounded connections and head deadlines (proxy_guard.py)
    )
    _quiet()
    return uvicorn.Server(config)


def serve(
    server_url: str,
    sock: socket.socket,
    on_record: Callable[[RequestRecord], None],
    should_stop: Callable[[], bool],
    started: threading.Event | None = None,
    route: RoutePlan | None = None,
    api_key: str | None = None,
) -> None:
    """Run the proxy on the bound `sock`, on this thread, until `should_stop()`; routed by `route`
    (to its plain and drafting servers only), else to `server_url`."""
    router = BatchRouter(route, time.monotonic) if route is not None else None
    app = CaptureProxy(route.draft_url if route else server_url, on_record, router=router)
    server = make_server(app)

    async def run() -> None:
        async def watch() -> None:
            while not should_stop():
                if server.started and started is not None:
                    started.set()
                await asyncio.sleep(STOP_POLL_S)
            server.should_exit = True

        watcher = asyncio.ensure_future(watch())
        busy = asyncio.ensure_future(poll_busy(router, api_key, should_stop)) if router else None
        try:
            await server.serve(sockets=[sock])
        finally:
            watcher.cancel()
            if busy is not None:
                busy.cancel()
            await app.client.aclose()

    try:
        asyncio.run(run())
    finally:
        sock.close()


class ProxyServer:
    """The proxy on a background thread, for a block: `with ProxyServer(url, address, cb) as p: p.url`.

    Port 0 picks a free port; `url` says which."""

    def __init__(
        self,
        server_url: str,
        address: ListenAddress,
        on_record: Callable[[RequestRecord], None],
        route: RoutePlan | None = None,
    ) -> None:
        self.server_url, self.on_record, self.route = server_url, on_record, route
        self.address = address
        self._stop = threading.Event()
        self._started = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return self.address.url

    def start(self, timeout_s: float = 10.0) -> ProxyServer:
        sock = bind(self.address)
        self.address = ListenAddress(self.address.host, sock.getsockname()[1])
        self._thread = threading.Thread(
            target=serve,
            args=(self.server_url, sock, self.on_record, self._stop.is_set, self._started, self.route),
            name="spectop-proxy",
            daemon=True,
        )
        self._thread.start()
        if not self._started.wait(timeout_s):
            self.stop()
            raise SpectopError(f"--proxy did not start on {self.url}", PROXY_FIX)
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(GRACE_S + 5.0)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
