"""Whether the server answering on a port is the process spectop started.

A sweep arm's command can start a server that dies at once (its port was taken: "Address already
in use") while another server answers on that port, or fork a daemon and exit. Measured as if it
were the arm, either gives figures of a server nobody asked for, unflagged. So a launched server
is ready only when its port was free before it started, it is still running, and the listening
socket belongs to it or to one of its children (psutil; where the system will not say, as for
another user's sockets, the other two checks stand alone).
"""

from __future__ import annotations

import socket

import httpx
import psutil


def port_of(url: str) -> tuple[str, int]:
    parsed = httpx.URL(url)
    return parsed.host or "127.0.0.1", parsed.port or (443 if parsed.scheme == "https" else 80)


def port_in_use(host: str, port: int) -> bool:
    """True when something accepts connections on `host:port` now."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def listens(pid: int, port: int) -> bool | None:
    """True when process `pid` or a descendant listens on `port`; None when the system will not say."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return None
    unknown = False
    for process in family:
        try:
            connections = process.net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        except psutil.AccessDenied:
            unknown = True
            continue
        if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in connections):
            return True
    return None if unknown else False
