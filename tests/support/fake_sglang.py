"""A fake SGLang 0.5.23: multiprocess-mode /metrics (no `_created`), /server_info, /v1/loads, /health."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from tests.support.fake_servers import MODEL, Answer, histogram, json_answer, render


@dataclass(frozen=True)
class SglangRank:
    """One DP rank's scheduler figures."""

    decode_tokens: float = 0  # sglang:realtime_tokens_total{mode="decode"}
    prefill_tokens: float = 0
    running: float = 0
    queued: float = 0
    accept_length: float = 0.0
    accept_rate: float = 0.0
    num_draft_tokens: float = 4
    context_len: float = 8192  # sglang:context_len, model_config.context_len
    token_usage: float = 0.0  # sglang:token_usage, used / max_total_num_tokens (a share)


@dataclass(frozen=True)
class SglangTokenizer:
    """The tokenizer manager's counters: they move when requests finish."""

    generated_streaming: float = 0
    generated_plain: float = 0
    verify_calls: float = 0
    prompt: float = 0


def sglang_page(
    ranks: list[SglangRank],
    tok: SglangTokenizer,
    tp_copies: int = 1,
    priority: bool = False,
    spec: bool = True,
) -> str:
    """Scheduler series per DP rank (dp_rank only with DP), repeated per tp_rank when asked."""
    dp = len(ranks) > 1
    names = ["engine_type", "model_name", "moe_ep_rank", "pp_rank", "tp_rank"] + (["dp_rank"] if dp else [])

    def sched() -> list[tuple[list[str], SglangRank, str]]:
        rows = []
        for i, rank in enumerate(ranks):
            for tp in range(tp_copies):
                row = ["unified", MODEL, "0", "0", str(tp)] + ([str(i)] if dp else [])
                rows.append((row, rank, ""))
                if priority:  # the total is under priority=""; a per-priority copy must not add to it
                    rows.append((row, rank, "1"))
        return rows

    def gauge(name: str, doc: str, attr: str) -> GaugeMetricFamily:
        family = GaugeMetricFamily(name, doc, labels=names + (["priority"] if priority else []))
        for row, rank, prio in sched():
            family.add_metric(row + ([prio] if priority else []), getattr(rank, attr))
        return family

    realtime = CounterMetricFamily(
        "sglang:realtime_tokens",
        "Total number of tokens processed (updated on each log interval). "
        "mode: prefill_compute, prefill_cache, decode.",
        labels=names + ["mode"] + (["priority"] if priority else []),
    )
    for row, rank, prio in sched():
        for mode, value in (
            ("prefill_compute", rank.prefill_tokens),
            ("prefill_cache", 0.0),
            ("decode", rank.decode_tokens),
        ):
            realtime.add_metric(
                row + [mode] + ([prio] if priority else []), value if prio == "" else value / 2
            )
    base = ["engine_type", "model_name"]
    generated = CounterMetricFamily(
        "sglang:generation_tokens", "Number of generation tokens processed.", labels=base + ["is_streaming"]
    )
    generated.add_metric(["unified", MODEL, "true"], tok.generated_streaming)
    generated.add_metric(["unified", MODEL, "false"], tok.generated_plain)
    prompt = CounterMetricFamily(
        "sglang:prompt_tokens", "Number of prefill tokens processed.", labels=base + ["is_streaming"]
    )
    prompt.add_metric(["unified", MODEL, "true"], tok.prompt)
    families: list[Metric] = [
        gauge("sglang:num_running_reqs", "The number of running requests.", "running"),
        gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", "queued"),
        gauge("sglang:gen_throughput", "The generation throughput (token/s).", "decode_tokens"),
        gauge("sglang:token_usage", "The token usage.", "token_usage"),
        # observability/metrics_collector.py:1337 (0.5.23), set from model_config.context_len
        gauge("sglang:context_len", "Maximum context length.", "context_len"),
        realtime,
        generated,
        prompt,
        histogram(
            "sglang:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            base,
            [(["unified", MODEL], tok.generated_streaming, 21.0)],
            (0.002, 0.008),
        ),
        histogram(
            "sglang:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            base + ["is_streaming"],
            [(["unified", MODEL, "true"], 10, 0.7)],
            (0.1, 0.25),
        ),
    ]
    if spec:
        families += [
            gauge(
                "sglang:spec_accept_length",
                "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
                "accept_length",
            ),
            gauge(
                "sglang:spec_accept_rate",
                "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
                "accept_rate",
            ),
            gauge(
                "sglang:spec_num_draft_tokens",
                "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).",
                "num_draft_tokens",
            ),
        ]
        calls = CounterMetricFamily(
            "sglang:spec_verify_calls", "Number of speculative decoding verification calls.", labels=base
        )
        calls.add_metric(["unified", MODEL], tok.verify_calls)
        families.append(calls)
    return render(families)


SGLANG_REFERENCE_PAGE = """\
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 8.0
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 1130.5
# HELP sglang:spec_accept_length Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 2.8
# HELP sglang:spec_accept_rate Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).
# TYPE sglang:spec_accept_rate gauge
sglang:spec_accept_rate{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0.6
# HELP sglang:spec_num_draft_tokens Currently active speculative_num_draft_tokens (decouples from steps under topk>1).
# TYPE sglang:spec_num_draft_tokens gauge
sglang:spec_num_draft_tokens{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 4.0
# HELP sglang:realtime_tokens_total Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.
# TYPE sglang:realtime_tokens_total counter
sglang:realtime_tokens_total{engine_type="unified",mode="decode",model_name="meta-llama/Llama-3.1-8B-Instruct",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 2800.0
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{engine_type="unified",is_streaming="true",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2900.0
# HELP sglang:spec_verify_calls_total Number of speculative decoding verification calls.
# TYPE sglang:spec_verify_calls_total counter
sglang:spec_verify_calls_total{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1000.0
# HELP sglang:inter_token_latency_seconds Histogram of inter-token latency in seconds.
# TYPE sglang:inter_token_latency_seconds histogram
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="0.008",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2800.0
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2800.0
sglang:inter_token_latency_seconds_sum{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct"} 21.0
sglang:inter_token_latency_seconds_count{engine_type="unified",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2800.0
"""


def server_info(
    spec: bool = True, dp: int = 1, accept_length: float | None = 2.71, startup_time: float = 1.78e9
) -> dict:
    """The /server_info shape: server args, scheduler info, internal_states per DP rank, version
    (entrypoints/http_server.py `server_info`, 0.5.23: server args, startup_time, internal_states, version);
    `context_length` is the --context-length argument, None by default (server_args.py)."""
    state: dict = {"last_gen_throughput": 1130.5, "effective_max_running_requests_per_dp": 48}
    if accept_length is not None:
        state["avg_spec_accept_length"] = accept_length
    return {
        "model_path": MODEL,
        "served_model_name": MODEL,
        "context_length": None,
        "startup_time": startup_time,
        "enable_metrics": True,
        "max_running_requests": None,
        "dp_size": dp,
        "speculative_algorithm": "EAGLE3" if spec else None,
        "speculative_num_steps": 3 if spec else None,
        "speculative_eagle_topk": 1 if spec else None,
        "speculative_num_draft_tokens": 4 if spec else None,
        "max_total_num_tokens": 500000,
        "internal_states": [dict(state) for _ in range(dp)],
        "version": "0.5.23",
    }


@dataclass
class FakeSglang:
    """An SGLang server whose counters grow by `step` on every /metrics scrape."""

    ranks: list[SglangRank]
    tok: SglangTokenizer = field(default_factory=SglangTokenizer)
    rank_step: list[SglangRank] = field(default_factory=list)
    tok_step: SglangTokenizer | None = None
    enable_metrics: bool = True
    spec: bool = True
    old: bool = False  # before 0.5.6: /get_server_info only, and no /v1/loads (0.5.8)
    lifetime_length: float = 2.71
    startup_time: float = 1.78e9  # /server_info's: a restart changes it
    hits: dict[str, int] = field(default_factory=dict)

    def __call__(self, path: str, query: dict[str, str]) -> Answer:
        self.hits[path] = self.hits.get(path, 0) + 1
        if path == "/health":
            return 200, "text/plain", b""
        if path == ("/get_server_info" if self.old else "/server_info"):
            return json_answer(server_info(self.spec, len(self.ranks), startup_time=self.startup_time))
        if path == "/v1/models":
            return json_answer(
                # http_server.py `available_models` (0.5.23): max_model_len = model_config.context_len
                {
                    "object": "list",
                    "data": [{"id": MODEL, "object": "model", "owned_by": "sglang", "max_model_len": 8192}],
                }
            )
        if path == "/v1/loads" and not self.old:
            return json_answer(
                {
                    "timestamp": "2026-01-01T00:00:00+00:00",
                    "version": "0.5.23",
                    "loads": [self._load(i, r) for i, r in enumerate(self.ranks)],
                }
            )
        if path == "/metrics" and self.enable_metrics:
            page = sglang_page(self.ranks, self.tok, spec=self.spec)
            if self.rank_step:
                self.ranks = [_grow(r, s) for r, s in zip(self.ranks, self.rank_step, strict=True)]
            if self.tok_step:
                t, s = self.tok, self.tok_step
                self.tok = SglangTokenizer(
                    t.generated_streaming + s.generated_streaming,
                    t.generated_plain + s.generated_plain,
                    t.verify_calls + s.verify_calls,
                    t.prompt + s.prompt,
                )
            return 200, "text/plain; version=0.0.4; charset=utf-8", page.encode()
        return 404, "application/json", b'{"detail":"Not Found"}'

    def _load(self, i: int, rank: SglangRank) -> dict:
        load = {
            "dp_rank": i,
            "num_running_reqs": int(rank.running),
            "num_waiting_reqs": int(rank.queued),
            "max_running_requests": 48,
            "token_usage": 0.1,
            "gen_throughput": 0.0,
        }
        if self.spec:  # accept_rate needs --enable-metrics; accept_length is lifetime
            load["speculative"] = {
                "accept_length": self.lifetime_length,
                "accept_rate": rank.accept_rate if self.enable_metrics else 0.0,
            }
        return load


def _grow(rank: SglangRank, step: SglangRank) -> SglangRank:
    return replace(
        step,
        decode_tokens=rank.decode_tokens + step.decode_tokens,
        prefill_tokens=rank.prefill_tokens + step.prefill_tokens,
    )
