"""Fake vLLM and SGLang servers: /metrics pages rendered by prometheus_client from the exact names,
HELP strings, label sets and types the servers' source gives (collectors/docs/servers.md, Sources), plus their
JSON endpoints.

`Routes` answers (path, query) → (status, content type, body), so the same fake serves an
httpx.MockTransport and a real loopback HTTP server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
CREATED = 1.7959406821869297e09
Answer = tuple[int, str, bytes]
Routes = Callable[[str, dict[str, str]], Answer]


@dataclass(frozen=True)
class VllmEngine:
    """One engine core's counters and gauges (one `engine` label value)."""

    generated: float = 0
    prompt: float = 0
    drafts: float = 0
    draft_tokens: float = 0
    accepted: float = 0
    per_pos: tuple[float, ...] = ()
    running: float = 0
    waiting: float = 0
    steps: float = 0  # vllm:iteration_tokens_total observations: one per engine step
    itl: float = 0  # vllm:inter_token_latency_seconds observations: one per request per step

    def plus(self, other: VllmEngine) -> VllmEngine:
        """Counters grown by `other`'s; gauges taken from `other`."""
        return replace(
            self,
            generated=self.generated + other.generated,
            prompt=self.prompt + other.prompt,
            drafts=self.drafts + other.drafts,
            draft_tokens=self.draft_tokens + other.draft_tokens,
            accepted=self.accepted + other.accepted,
            per_pos=tuple(a + b for a, b in zip(self.per_pos, other.per_pos, strict=True)),
            running=other.running,
            waiting=other.waiting,
            steps=self.steps + other.steps,
            itl=self.itl + other.itl,
        )


class _Families:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def render(families: list[Metric]) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    return generate_latest(registry).decode()


def histogram(
    name: str,
    doc: str,
    labels: list[str],
    rows: list[tuple[list[str], float, float]],
    bounds: tuple[float, ...],
) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=labels)
    for values, count, total in rows:  # every observation in the lowest bucket: only counts matter here
        buckets = [(str(b), count) for b in bounds] + [("+Inf", count)]
        family.add_metric(values, buckets=buckets, sum_value=total)
    return family


def vllm_page(
    engines: list[VllmEngine],
    created: float | None = CREATED,
    model: str = MODEL,
    spec: bool = True,
    old_names: bool = False,
) -> str:
    """A vLLM 0.33 /metrics page (old_names: the ≤0.11 step-latency name); created=None: multiprocess."""
    labels = ["engine", "model_name"]

    def counter(name: str, doc: str, value: Callable[[VllmEngine], float]) -> CounterMetricFamily:
        family = CounterMetricFamily(name, doc, labels=labels)
        for i, e in enumerate(engines):
            family.add_metric([str(i), model], value(e), created=created)
        return family

    def gauge(name: str, doc: str, value: Callable[[VllmEngine], float]) -> GaugeMetricFamily:
        family = GaugeMetricFamily(name, doc, labels=labels)
        for i, e in enumerate(engines):
            family.add_metric([str(i), model], value(e))
        return family

    step_latency = "vllm:time_per_output_token_seconds" if old_names else "vllm:inter_token_latency_seconds"
    families: list[Metric] = [
        gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches.", lambda e: e.running
        ),
        gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed.", lambda e: e.waiting
        ),
        gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", lambda e: 0.25),
        counter("vllm:prompt_tokens", "Number of prefill tokens processed.", lambda e: e.prompt),
        counter("vllm:generation_tokens", "Number of generation tokens processed.", lambda e: e.generated),
        histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            labels,
            [([str(i), model], e.steps, e.steps * 9) for i, e in enumerate(engines)],
            (1, 8, 16),
        ),
        histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            labels,
            [([str(i), model], 10, 0.7) for i, _ in enumerate(engines)],
            (0.001, 0.08, 0.25),
        ),
        histogram(
            step_latency,
            "Histogram of inter-token latency in seconds.",
            labels,
            [([str(i), model], e.itl, e.itl * 0.021) for i, e in enumerate(engines)],
            (0.01, 0.025),
        ),
    ]
    success = CounterMetricFamily(
        "vllm:request_success",
        "Count of successfully processed requests.",
        labels=["engine", "finished_reason", "model_name"],
    )
    for i, _ in enumerate(engines):
        for reason in ("stop", "length", "abort", "error", "repetition"):
            success.add_metric([str(i), reason, model], 3 if reason == "length" else 0, created=created)
    families.append(success)
    if spec:
        families += [
            counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", lambda e: e.drafts),
            counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", lambda e: e.draft_tokens),
            counter(
                "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", lambda e: e.accepted
            ),
        ]
        per_pos = CounterMetricFamily(
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            labels=["engine", "model_name", "position"],
        )
        for i, e in enumerate(engines):
            for pos, value in enumerate(e.per_pos):
                per_pos.add_metric([str(i), model, str(pos)], value, created=created)
        families.append(per_pos)
    return render(families)


# vLLM's own page as its source writes it (collectors/docs/servers.md, vLLM), k=3, one engine, its "..." lines left out.
VLLM_REFERENCE_PAGE = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 8.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2900.0
# HELP vllm:generation_tokens_created Number of generation tokens processed.
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7959406821869297e+09
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3000.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1800.0
# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",position="0"} 800.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",position="1"} 600.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",position="2"} 400.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.08",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 7.0
# HELP vllm:inter_token_latency_seconds Histogram of inter-token latency in seconds.
# TYPE vllm:inter_token_latency_seconds histogram
vllm:inter_token_latency_seconds_bucket{engine="0",le="0.025",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
vllm:inter_token_latency_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
vllm:inter_token_latency_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
vllm:inter_token_latency_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 21.0
"""


def chat_stream(tokens: int, burst: int = 1) -> bytes:
    """A streamed chat answer of `tokens` tokens with continuous usage, then [DONE]: the first token
    in a chunk of its own, the rest `burst` tokens a chunk (one verify step each)."""
    counts = [1, *range(1 + burst, tokens, burst), tokens] if tokens > 1 else [1]
    chunks = [
        {
            "model": MODEL,
            "choices": [{"index": 0, "delta": {"content": f"t{i} "}, "finish_reason": None}],
            "usage": {"prompt_tokens": 12, "completion_tokens": i, "total_tokens": 12 + i},
        }
        for i in counts
    ]
    chunks[-1]["choices"][0]["finish_reason"] = "length"
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


@dataclass
class FakeVllm:
    """A vLLM server whose counters grow by `step` on every /metrics scrape, and by `per_request`
    (on engine 0) for every chat completion it streams (`answer_tokens` tokens long)."""

    engines: list[VllmEngine]
    step: list[VllmEngine] = field(default_factory=list)
    metrics_status: int = 200
    stats_off: bool = False
    tool_parser: bool = False  # --tool-call-parser: its counter is registered whatever the stats flag says
    spec: bool = True
    dev_mode: bool = False
    max_num_seqs: int = 256
    spec_config: dict | None = field(
        default_factory=lambda: {"method": "eagle3", "num_speculative_tokens": 3}
    )
    per_request: VllmEngine | None = None
    answer_tokens: int = 16
    answer_burst: int = 1  # tokens per chunk after the first
    hits: dict[str, int] = field(default_factory=dict)

    def __call__(self, path: str, query: dict[str, str]) -> Answer:
        self.hits[path] = self.hits.get(path, 0) + 1
        if path == "/health":
            return 200, "text/plain", b""
        if path == "/v1/chat/completions":
            if self.per_request is not None:
                self.engines = [self.engines[0].plus(self.per_request), *self.engines[1:]]
            return 200, "text/event-stream", chat_stream(self.answer_tokens, self.answer_burst)
        if path == "/version":
            return json_answer({"version": "0.33.0"})
        if path == "/v1/models":
            return json_answer(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": MODEL,
                            "object": "model",
                            "owned_by": "vllm",
                            "root": MODEL,
                            "max_model_len": 8192,
                        }
                    ],
                }
            )
        if path == "/server_info" and self.dev_mode and query.get("config_format") == "json":
            return json_answer(
                {
                    "vllm_config": {
                        "model_config": {"max_model_len": 8192},
                        "scheduler_config": {"max_num_seqs": self.max_num_seqs},  # per engine
                        "parallel_config": {"data_parallel_size": len(self.engines)},
                        "speculative_config": self.spec_config,
                    }
                }
            )
        if path == "/metrics" and self.metrics_status == 200:
            if self.stats_off:
                page = render(
                    [
                        CounterMetricFamily(
                            "http_requests",
                            "Total number of requests by method, status and handler.",
                            labels=["handler"],
                        ),
                        *(tool_parser_families() if self.tool_parser else []),
                    ]
                )
            else:
                page = vllm_page(self.engines, spec=self.spec)
            if self.step:
                self.engines = [e.plus(s) for e, s in zip(self.engines, self.step, strict=True)]
            return 200, "text/plain; version=0.0.4; charset=utf-8", page.encode()
        if path == "/metrics":
            return self.metrics_status, "text/plain", b"Unauthorized"
        return 404, "application/json", b'{"detail":"Not Found"}'


def tool_parser_families() -> list[Metric]:
    """What a vLLM 0.33 API server registers at start with --tool-call-parser, stats on or off:
    vllm/parser/metrics.py `init_parser_metrics` (every label set at 0), and the realtime task's
    websocket series (vllm/entrypoints/speech_to_text/realtime/metrics.py:22-37)."""
    tool = CounterMetricFamily(
        "vllm:tool_call_parser_invocations",
        "Total number of ToolParser invocations. Non-streaming increments once per choice; "
        "streaming increments once per delta.",
        labels=["model_name", "mode", "outcome", "request_type"],
    )
    for mode in ("streaming", "non_streaming"):
        for outcome in ("tool_call", "no_tool_call"):
            for request_type in ("chat_completions", "responses", "other"):
                tool.add_metric([MODEL, mode, outcome, request_type], 0.0, created=CREATED)
    active = GaugeMetricFamily(
        "vllm:websocket_connections_active", "Number of currently active WebSocket connections."
    )
    active.add_metric([], 0.0)
    total = CounterMetricFamily("vllm:websocket_connections", "Total number of WebSocket connections.")
    total.add_metric([], 0.0, created=CREATED)
    return [tool, active, total]


def json_answer(body: object) -> Answer:
    return 200, "application/json", json.dumps(body).encode()


def mock_client(routes: Routes) -> httpx.AsyncClient:
    """An httpx client whose every request is answered by `routes`."""

    def handler(request: httpx.Request) -> httpx.Response:
        status, content_type, body = routes(request.url.path, dict(request.url.params))
        return httpx.Response(status, content=body, headers={"Content-Type": content_type})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))
