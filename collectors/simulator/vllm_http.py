"""One simulated vLLM (V1 engine; one API server, or DP N with N API servers: vllm_dp.py) on loopback.

Routes as vLLM 0.33 serves them: `/health` 200 with an empty body
(`entrypoints/serve/instrumentator/health.py:22-33`), `/version`
(`instrumentator/basic.py:53-56`), `/v1/models` with `owned_by: vllm`, `root` and
`max_model_len` (`serve/engine/protocol.py:105-118`, `openai/models/serving.py:69-74`),
`/server_info?config_format=json` as with `VLLM_SERVER_DEV_MODE=1`
(`serve/dev/server_info/api_router.py:43-62`: `vllm_config` with the scheduler's
`max_num_seqs` and the `speculative_config`), `/metrics` (vllm_metrics.py) and the
OpenAI-compatible completions (openai_http.py). Pitfall handled: vLLM's `max_num_seqs` is the
batch limit, the simulator's slot count.
"""

from __future__ import annotations

from typing import Any

from collectors.simulator.engine import Engine
from collectors.simulator.openai_http import OpenAIHandler, OpenAIServer
from collectors.simulator.tasks import Task
from collectors.simulator.vllm_dp import VllmDpMetrics
from collectors.simulator.vllm_metrics import VllmMetrics
from collectors.simulator.vllm_schedule import VllmDynamicK

VERSION = "0.33.0"


class VllmServer(OpenAIServer):
    owned_by = "vllm"

    def __init__(
        self, address: tuple[str, int], engine: Engine, metrics: VllmMetrics | VllmDpMetrics
    ) -> None:
        super().__init__(address, engine, _Handler)
        self.metrics = metrics
        self.dp_size = metrics.engines if isinstance(metrics, VllmDpMetrics) else 1

    def request_metrics(self, task: Task) -> dict[str, Any] | None:
        """`metrics.speculative_decoding` on the final usage chunk, as 0.33 streams it
        (`entrypoints/openai/chat_completion/serving.py:883-911`); only with the flag on."""
        spec = self.metrics.request_spec(task.id)
        return None if spec is None else {"speculative_decoding": spec}

    def config(self) -> dict[str, Any]:
        engine = self.engine
        spec = None
        if isinstance(engine.policy, VllmDynamicK):  # as configured (its schedule None if refused)
            spec = dict(engine.policy.config)
        elif engine.speculative:
            spec = {"method": "draft_model", "num_speculative_tokens": engine.profile.draft.n_max}
        return {
            "model_config": {"model": engine.profile.model_alias, "max_model_len": engine.n_ctx},
            # max_num_seqs is per engine (config/scheduler.py); DP size: config/parallel.py:147
            "scheduler_config": {
                "max_num_seqs": engine.n_slots // self.dp_size,
                "max_num_batched_tokens": 8192,
            },
            "parallel_config": {"data_parallel_size": self.dp_size},
            "speculative_config": spec,
        }


def models_json(server: VllmServer) -> dict[str, Any]:
    model = server.engine.profile.model_alias
    card = {
        "id": model,
        "object": "model",
        "created": server.created,
        "owned_by": "vllm",
        "root": model,
        "parent": None,
        "max_model_len": server.engine.n_ctx,
        "permission": [],
    }
    return {"object": "list", "data": [card]}


class _Handler(OpenAIHandler):
    server: VllmServer

    def get_route(self, path: str, query: dict[str, list[str]]) -> bool:
        server = self.server
        if path == "/health":
            self.send_body(200, b"", "application/json")
        elif path == "/version":
            self.send_json(200, {"version": VERSION})
        elif path == "/v1/models":
            self.send_json(200, models_json(server))
        elif path == "/server_info":
            json_form = query.get("config_format") == ["json"]
            config: Any = server.config() if json_form else str(server.config())
            self.send_json(200, {"vllm_config": config, "vllm_env": {}, "system_env": {}})
        elif path == "/load":
            live = server.engine.live()
            self.send_json(200, {"server_load": live.busy_slots + live.deferred})
        elif path == "/metrics":
            self.send_body(
                200, server.metrics.render(server.engine), "text/plain; version=0.0.4; charset=utf-8"
            )
        else:
            return False
        return True
