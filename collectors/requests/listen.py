"""Where the capture proxy listens (`--proxy [HOST:]PORT`), checked before the dashboard starts.

Apart from collectors/requests/proxy_server.py so that reading and checking the option costs no
web server import: the dashboard's first frame does not wait for uvicorn.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from collectors.errors import SpectopError

LOOPBACK = "127.0.0.1"
PROXY_FIX = "e.g. --proxy 8081 (loopback) or --proxy 0.0.0.0:8081"


@dataclass(frozen=True, slots=True)
class ListenAddress:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def listen_address(spec: str) -> ListenAddress:
    """`PORT` (on loopback) or `HOST:PORT`; SpectopError naming --proxy otherwise."""
    host, sep, port_text = spec.strip().rpartition(":")
    host = host.strip("[]") if sep else LOOPBACK
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 < port < 65536 or (sep and not host):
        raise SpectopError(f"--proxy must be [HOST:]PORT, not {spec!r}", PROXY_FIX)
    return ListenAddress(host, port)


def bind(address: ListenAddress) -> socket.socket:
    """A socket bound to `address`; SpectopError naming --proxy when it cannot be (taken, not ours)."""
    try:
        family, kind, proto, _, sockaddr = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise SpectopError(
            f"--proxy cannot listen on {address.host} ({exc.strerror or exc})", PROXY_FIX
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
    except OSError as exc:
        sock.close()
        raise SpectopError(
            f"--proxy cannot listen on {address.host}:{address.port} ({exc.strerror or exc})",
            "pick a free port: " + PROXY_FIX,
        ) from None
    return sock


def check_port(address: ListenAddress) -> None:
    """SpectopError now, before the dashboard starts, when the proxy could not listen there."""
    bind(address).close()
