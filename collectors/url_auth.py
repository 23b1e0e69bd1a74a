"""A password in a URL (`http://user:pw@host`) is a secret: taken off the URL where spectop reads it,
kept in memory for that URL's origin, and added to each request to that origin as Basic auth.

Why a table by origin and not the URL itself: a server's URL is shown (top bar, fleet, errors),
stored (recordings, sweep folders) and served (the exporter's labels) in dozens of places; once
the userinfo is off the string none of them can leak it, and no caller has to remember to hide it.
httpx would read userinfo from a request URL as Basic auth; this does the same from the table, and,
as httpx does, the URL's credentials win over an Authorization header already on the request.
"""

from __future__ import annotations

import base64
from collections.abc import Generator

import httpx

_CREDENTIALS: dict[tuple[bytes, str, int | None], tuple[str, str]] = {}


def _origin(url: httpx.URL) -> tuple[bytes, str, int | None]:
    return url.raw_scheme, url.host.lower(), url.port


def without_userinfo(url: str) -> str:
    """`url` with any `user:password@` removed; the credentials are remembered for its origin.

    A text httpx cannot read as a URL is returned as it was (the caller's check says what is wrong
    with it; its error message shows the URL, so a password in it is hidden by `shown`)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return url
    if not parsed.userinfo:
        return url
    _CREDENTIALS[_origin(parsed)] = (parsed.username, parsed.password)
    return str(parsed.copy_with(username=None, password=None))


def shown(url: str) -> str:
    """`url` as it may be shown or stored: any userinfo replaced by `***@` (never remembered)."""
    head, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{head}://***@{authority.rpartition('@')[2]}{slash}{path}"


def has_credentials(url: str) -> bool:
    """A password was given for `url`'s origin (its requests must go through `ORIGIN_AUTH`)."""
    return bool(_CREDENTIALS) and _origin(httpx.URL(url)) in _CREDENTIALS


class OriginAuth(httpx.Auth):
    """Basic auth for requests to an origin whose URL was given with credentials; nothing otherwise."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        credentials = _CREDENTIALS.get(_origin(request.url))
        if credentials is not None:
            token = base64.b64encode(":".join(credentials).encode()).decode("ascii")
            request.headers["Authorization"] = f"Basic {token}"
        yield request


ORIGIN_AUTH = OriginAuth()
