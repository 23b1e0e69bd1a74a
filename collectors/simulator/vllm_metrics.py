"""vLLM V1's `/metrics` for one simulated engine, kept the way vLLM 0.33 keeps it.

Sources (vllm-0.33.0 wheel): the series, HELP strings, labels (`model_name`, `engine`) and
buckets are `vllm/v1/metrics/loggers.py:499-1020` (`PrometheusStatLogger.__init__`) and
`vllm/v1/metrics/buckets.py:30-140`; what moves when is `loggers.py:1135-1330` (`record`) and
`vllm/v1/metrics/stats.py:509-557` (`IterationStats.update_from_output`); the spec series are
`vllm/v1/spec_decode/metrics.py:198-275`, registered only with a speculative config; each
request's own figures are vllm_request_spec.py's.

Pitfalls handled: the counters move on every engine step, not when a request ends, so a running
request's tokens count at once: `generation_tokens` takes every token a step emits (a request's
first, its step token and its accepted drafts), `iteration_tokens_total` one observation per step
(computed prompt tokens + generated tokens), `inter_token_latency_seconds` one per request per
step after its first token (a verify step's burst is one observation). `spec_decode_num_drafts`
counts (request, step) pairs that drafted at least one token. The page is rendered by
prometheus_client in single-process mode (one API server), so counters carry `_created`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from collectors.simulator.tasks import StepPlan, Task
from collectors.simulator.vllm_request_spec import RequestSpecRecords

if TYPE_CHECKING:
    from collectors.simulator.engine import Engine

LABELS = ("model_name", "engine")
REQUEST_LATENCY_BUCKETS: tuple[float, ...] = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
)
REQUEST_LATENCY_BUCKETS += (120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
TTFT_BUCKETS: tuple[float, ...] = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
)
TTFT_BUCKETS += (10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS: tuple[float, ...] = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
)
ITL_BUCKETS += (40.0, 80.0)
ITERATION_TOKENS_BUCKETS: tuple[float, ...] = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")  # vllm/v1/engine FinishReason


def request_tokens_buckets(max_model_len: int) -> tuple[int, ...]:
    """1, 2, 5, 10, 20, 50, ... up to `max_model_len` (buckets.py `build_1_2_5_buckets`)."""
    out: list[int] = []
    scale = 1
    while True:
        for m in (1, 2, 5):
            if m * scale > max_model_len:
                return tuple(out)
            out.append(m * scale)
        scale *= 10


class VllmMetrics:
    """The engine's series in a registry of their own; a `StepObserver` of one `Engine`."""

    def __init__(
        self,
        model: str,
        max_model_len: int,
        num_speculative_tokens: int,
        engine_index: int = 0,
        per_request_spec: str = "none",
    ) -> None:
        self._requests = RequestSpecRecords(num_speculative_tokens, per_request_spec)
        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self._values = (model, str(engine_index))
        self._k = num_speculative_tokens
        reg = self.registry

        # each series is created with its engine's labels at start, as vLLM does (vllm/v1/metrics/
        # utils.py `create_metric_per_engine`): every series is on the page from the first scrape, at 0
        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, LABELS, registry=reg).labels(*self._values)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, LABELS, registry=reg).labels(*self._values)

        def hist(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, LABELS, buckets=buckets, registry=reg).labels(*self._values)

        self.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
        self.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
        by_reason = Gauge(  # loggers.py:548-558; the simulator's waiting requests all wait for capacity
            "vllm:num_requests_waiting_by_reason",
            "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling "
            "capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, "
            "blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
            [*LABELS, "reason"],
            registry=reg,
        )
        self.waiting_capacity = by_reason.labels(*self._values, "capacity")
        by_reason.labels(*self._values, "deferred")
        sleep = Gauge(
            "vllm:engine_sleep_state",
            "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; "
            "weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
            [*LABELS, "sleep_state"],
            registry=reg,
        )
        for state in ("awake", "weights_offloaded", "discard_all"):
            sleep.labels(*self._values, state).set(1 if state == "awake" else 0)
        self.kv_usage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.preemptions = counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.")
        self.prompt = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.cached = counter(
            "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external)."
        )
        self.generated = counter("vllm:generation_tokens", "Number of generation tokens processed.")
        # loggers.py (0.11.0) :258-272: tokens looked up in the prefix cache and tokens found there
        self.cache_queries = counter(
            "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens."
        )
        self.cache_hits = counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        )
        self.success = Counter(
            "vllm:request_success", "Count of successfully processed requests.", [*LABELS, "finished_reason"],
            registry=reg,
        )  # fmt: skip
        for reason in FINISH_REASONS:
            self.success.labels(*self._values, reason)
        tokens_buckets = request_tokens_buckets(max_model_len)
        self.req_prompt = hist(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokens_buckets
        )
        self.req_generated = hist(
            "vllm:request_generation_tokens", "Number of generation tokens processed.", tokens_buckets
        )
        self.iteration = hist(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            ITERATION_TOKENS_BUCKETS,
        )
        self.max_tokens = hist(
            "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tokens_buckets
        )
        self.ttft = hist(
            "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS
        )
        self.itl = hist(
            "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_BUCKETS
        )
        self.tpot = hist(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            ITL_BUCKETS,
        )
        phases = (
            ("e2e_request_latency_seconds", "Histogram of e2e request latency in seconds."),
            ("request_queue_time_seconds", "Histogram of time spent in WAITING phase for request."),
            ("request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request."),
            ("request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request."),
            ("request_decode_time_seconds", "Histogram of time spent in DECODE phase for request."),
        )
        self.phases = [hist(f"vllm:{name}", doc, REQUEST_LATENCY_BUCKETS) for name, doc in phases]
        self.spec: tuple[Counter, Counter, Counter] | None = None
        self.per_pos: list[Counter] = []
        if num_speculative_tokens:
            self.spec = (
                counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts."),
                counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens."),
                counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens."),
            )
            base = Counter(
                "vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                [*LABELS, "position"], registry=reg,
            )  # fmt: skip
            self.per_pos = [base.labels(*self._values, str(p)) for p in range(num_speculative_tokens)]

    def on_step(self, plan: StepPlan, now: float) -> None:
        with self._lock:
            step_tokens = 0
            for task, drafted, accepted, committed in plan:
                if task.cancelled:
                    continue
                if task.n_decoded == 0:  # the prefill step: its prompt and its first token
                    self.prompt.inc(task.n_prompt)
                    self.cached.inc(task.n_cached)
                    self.cache_queries.inc(task.n_prompt)
                    self.cache_hits.inc(task.n_cached)
                    step_tokens += task.n_processed
                    self.ttft.observe(now - task.t_submit)
                else:
                    self.itl.observe(now - task.t_gen_last)
                step_tokens += committed
                self.generated.inc(committed)
                if drafted and self.spec is not None:
                    self._requests.observe(task.id, drafted, accepted)
                    drafts, draft_tokens, accepted_tokens = self.spec
                    drafts.inc()
                    draft_tokens.inc(drafted)
                    accepted_tokens.inc(accepted)
                    for pos in range(min(accepted, self._k)):
                        self.per_pos[pos].inc()
            self.iteration.observe(step_tokens)

    def request_spec(self, task_id: int) -> dict[str, object] | None:
        with self._lock:
            return self._requests.take(task_id)

    def on_finish(self, task: Task, stop_type: str) -> None:
        reason = {"limit": "length", "eos": "stop"}.get(stop_type, "abort")
        end = task.t_gen_last if task.n_decoded else task.t_start
        with self._lock:
            self._requests.trim()
            self.success.labels(*self._values, reason).inc()
            if task.n_decoded == 0:
                return
            e2e, queue, prefill = (
                end - task.t_submit,
                task.t_start - task.t_submit,
                task.t_prompt_done - task.t_start,
            )
            decode = end - task.t_prompt_done
            for hist, seconds in zip(self.phases, (e2e, queue, end - task.t_start, prefill, decode)):
                hist.observe(max(0.0, seconds))
            self.req_prompt.observe(task.n_prompt)
            self.req_generated.observe(task.n_decoded)
            self.tpot.observe(decode / (task.n_decoded - 1) if task.n_decoded > 1 else 0.0)
            if task.n_predict > 0:
                self.max_tokens.observe(task.n_predict)

    def set_gauges(self, running: int, waiting: int, kv_usage: float) -> None:
        """The scheduler's state at this instant."""
        with self._lock:
            self.running.set(running)
            self.waiting.set(waiting)
            self.waiting_capacity.set(waiting)
            self.kv_usage.set(kv_usage)

    def page(self, running: int, waiting: int, kv_usage: float) -> bytes:
        """The page now, as one API server's single-process registry renders it."""
        self.set_gauges(running, waiting, kv_usage)
        with self._lock:
            return generate_latest(self.registry)

    def render(self, engine: Engine) -> bytes:
        live = engine.live()
        used = sum(v.n_prompt_tokens for v in engine.slots() if v.is_processing)
        return self.page(live.busy_slots, live.deferred, used / (engine.n_slots * engine.n_ctx))
