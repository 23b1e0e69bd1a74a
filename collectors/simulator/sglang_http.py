"""One simulated SGLang server (one DP rank, `--enable-metrics`, EAGLE-style drafting) on loopback.

Routes as SGLang 0.5.23 serves them (`srt/entrypoints/http_server.py`): `/health` 200 empty
(:721), `/server_info` and its older name `/get_server_info` (:853-870: server args,
`internal_states` per DP rank, `version`; `context_length` is the --context-length argument,
None by default), `/v1/models` with `owned_by: sglang` and `max_model_len`
(:1993-2010, model_config.context_len), `/v1/loads` (`srt/entrypoints/v1_loads.py:96`, one
`LoadSnapshot.to_dict` per rank, `srt/managers/load_snapshot.py:195-260`, counted live on each
call), `/metrics` (sglang_metrics.py), the native `/generate` with per-request spec counts in its
last `meta_info` (sglang_generate.py) and the OpenAI-compatible completions (openai_http.py).
Pitfall handled: `/v1/loads`' `speculative.accept_length` is the lifetime figure, its
`accept_rate` the last logged interval's.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from collectors.simulator.engine import Engine
from collectors.simulator.openai_http import OpenAIHandler, OpenAIServer
from collectors.simulator.sglang_generate import serve_generate
from collectors.simulator.sglang_metrics import SglangMetrics
from collectors.simulator.sglang_schedule import SglangAdaptiveK

VERSION = "0.5.23"


class SglangServer(OpenAIServer):
    owned_by = "sglang"

    def __init__(self, address: tuple[str, int], engine: Engine, metrics: SglangMetrics) -> None:
        super().__init__(address, engine, _Handler)
        self.metrics = metrics
        self.startup_time = time.time()

    def chunk_id(self) -> str:
        return super().chunk_id().removeprefix("chatcmpl-")

    def choice_extra(self) -> dict[str, Any]:
        return {"logprobs": None, "matched_stop": None}

    def max_total_tokens(self) -> int:
        return self.engine.n_slots * self.engine.n_ctx

    def server_info(self) -> dict[str, Any]:
        engine, spec = self.engine, self.engine.speculative
        policy = engine.policy if isinstance(engine.policy, SglangAdaptiveK) else None
        k = policy.static_steps if policy else engine.profile.draft.n_max
        state: dict[str, Any] = {
            "last_gen_throughput": self.metrics.last_throughput,
            "effective_max_running_requests_per_dp": engine.n_slots,
        }
        if spec:
            state["avg_spec_accept_length"] = self.metrics.lifetime_accept_length()
        return {
            "model_path": engine.profile.model_alias,
            "served_model_name": engine.profile.model_alias,
            "context_length": None,
            "startup_time": self.startup_time,
            "enable_metrics": True,
            "max_running_requests": engine.n_slots,
            "dp_size": 1,
            "speculative_algorithm": "EAGLE" if spec else None,
            "speculative_num_steps": k if spec else None,
            "speculative_eagle_topk": 1 if spec else None,
            "speculative_num_draft_tokens": k + 1 if spec else None,
            "speculative_adaptive": bool(policy and policy.slots),
            "speculative_adaptive_config": policy.config_path if policy else None,
            "max_total_num_tokens": self.max_total_tokens(),
            "internal_states": [state],
            "version": VERSION,
        }

    def load(self) -> dict[str, Any]:
        live = self.engine.live()
        used = sum(v.n_prompt_tokens for v in self.engine.slots() if v.is_processing)
        load: dict[str, Any] = {
            "timestamp": time.time(),
            "dp_rank": 0,
            "num_running_reqs": live.busy_slots,
            "num_waiting_reqs": live.deferred,
            "num_used_tokens": used,
            "max_total_num_tokens": self.max_total_tokens(),
            "max_running_requests": self.engine.n_slots,
            "token_usage": used / self.max_total_tokens(),
            "gen_throughput": self.metrics.last_throughput,
        }
        if self.engine.speculative:
            rate = self.metrics.last_accept_rate
            load["speculative"] = {
                "accept_length": self.metrics.lifetime_accept_length(),
                "accept_rate": rate,
            }
        return load


class _Handler(OpenAIHandler):
    server: SglangServer

    def do_POST(self) -> None:  # noqa: N802 - stdlib hook
        if urlsplit(self.path).path not in ("/generate",):
            super().do_POST()
            return
        body = self._read_json()
        if body is not None:
            serve_generate(self, body)

    def get_route(self, path: str, query: dict[str, list[str]]) -> bool:
        server = self.server
        if path == "/health":
            self.send_body(200, b"", "text/plain")
        elif path in ("/server_info", "/get_server_info"):
            self.send_json(200, server.server_info())
        elif path == "/v1/models":
            model = server.engine.profile.model_alias
            card = {"id": model, "object": "model", "created": server.created, "owned_by": "sglang"}
            card.update(root=model, max_model_len=server.engine.n_ctx)
            self.send_json(200, {"object": "list", "data": [card]})
        elif path == "/v1/loads":
            stamp = datetime.now(timezone.utc).isoformat()
            self.send_json(200, {"timestamp": stamp, "version": VERSION, "loads": [server.load()]})
        elif path == "/metrics":
            live = server.engine.live()
            steps = server.engine.k_now if server.engine.policy else None
            page = server.metrics.page(live.deferred, server.load()["token_usage"], steps)
            self.send_body(200, page, "text/plain; version=0.0.4; charset=utf-8")
        else:
            return False
        return True
