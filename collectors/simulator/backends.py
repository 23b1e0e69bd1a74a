"""Which dialect a simulated arm speaks: its counters (a `StepObserver` of the engine) and its
HTTP front. llama-server's live in the engine itself (counters.py, llama_http.py); vLLM's and
SGLang's are built here, so the page writers never meet spectop's readers (collectors/servers)."""

from __future__ import annotations

from collectors.simulator.engine import Engine
from collectors.simulator.loopback import LoopbackServer
from collectors.simulator.profiles import Profile
from collectors.simulator.sglang_http import SglangServer
from collectors.simulator.sglang_metrics import SglangMetrics
from collectors.simulator.vllm_dp import VllmDpMetrics
from collectors.simulator.vllm_http import VllmServer
from collectors.simulator.vllm_metrics import VllmMetrics

BACKENDS = ("llama-server", "vllm", "sglang")
DialectStats = VllmMetrics | VllmDpMetrics | SglangMetrics


def dialect_stats(
    backend: str, profile: Profile, kind: str, n_ctx: int, dp: int = 1, per_request_spec: str = "none"
) -> DialectStats:
    """The counters of one arm ("plain", "draft" or a scheduled one); all but plain draft. `dp` > 1: a vLLM
    with that many data-parallel engines and, as vLLM defaults, as many API servers.
    `per_request_spec`: vLLM's --per-request-spec-decode-metrics ("none", "summary", "detailed")."""
    k = 0 if kind == "plain" else profile.draft.n_max  # any other arm has speculation configured
    if backend == "vllm" and dp > 1:
        return VllmDpMetrics(profile.model_alias, n_ctx, k, dp, dp, per_request_spec)
    if backend == "vllm":
        return VllmMetrics(profile.model_alias, n_ctx, k, per_request_spec=per_request_spec)
    if backend == "sglang":
        return SglangMetrics(profile.model_alias, n_ctx, k + 1 if k else 0)
    raise KeyError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")


def dialect_server(
    backend: str, address: tuple[str, int], engine: Engine, stats: DialectStats
) -> LoopbackServer:
    if backend == "vllm" and isinstance(stats, (VllmMetrics, VllmDpMetrics)):
        return VllmServer(address, engine, stats)
    if backend == "sglang" and isinstance(stats, SglangMetrics):
        return SglangServer(address, engine, stats)
    raise KeyError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
