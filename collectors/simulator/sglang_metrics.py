"""SGLang's `/metrics` and `/v1/loads` figures for one simulated scheduler, as SGLang 0.5.23 keeps them.

Sources (sglang-0.5.23 wheel): series, HELP strings and labels are
`srt/observability/metrics_collector.py:365-545` (scheduler gauges), `:1032-1039`
(`realtime_tokens_total`), `:1337` (`context_len`), `:1855-1869` (tokenizer counters) and
`:2040-2072` (latency histograms); when they move is
`srt/managers/scheduler_components/metrics_reporter.py:901-1060` (`report_decode_stats`).

Pitfalls handled: the scheduler's gauges (running, queued, gen_throughput, spec_accept_length,
spec_accept_rate) are set only every `DECODE_LOG_INTERVAL` decode iterations, over those
iterations; `realtime_tokens_total{mode="decode"}` moves on every iteration (a request's first
token comes from prefill, not decode); the tokenizer's token and verify counters move only when a
request finishes. Accept length counts the bonus token (accepted + 1 per request per verify).
`spec_accept_rate` is correct drafts over proposed drafts: SGLang divides by forward passes ×
(num_draft_tokens − 1), which equals the drafts proposed when every draft is full length; the
simulator's drafts vary in length, so it divides by the drafts it proposed. The page is
rendered as in multiprocess mode (SGLang sets PROMETHEUS_MULTIPROC_DIR): no `_created` samples.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import Metric

from collectors.simulator.tasks import StepPlan, Task

DECODE_LOG_INTERVAL = 40  # srt/observability get_observability().decode_log_interval default
SCHEDULER = ("engine_type", "model_name", "moe_ep_rank", "pp_rank", "tp_rank")
TOKENIZER = ("engine_type", "model_name")
# metrics_collector.py (0.5.23) :1965-2037, the defaults without --bucket-* flags, and :841-882
# fmt: off
TTFT_BUCKETS: tuple[float, ...] = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
E2E_BUCKETS: tuple[float, ...] = (*TTFT_BUCKETS, 600, 1200, 1800, 2400)
QUEUE_BUCKETS: tuple[float, ...] = (
    0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90,
    100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
)
# fmt: on
ITL_BUCKETS: tuple[float, ...] = (
    0.002,
    0.004,
    0.006,
    0.008,
    0.010,
    0.015,
    0.020,
    0.025,
    0.030,
    0.035,
    0.040,
    0.060,
    0.080,
)
ITL_BUCKETS += (0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0)


class _NoCreated:
    """The registry's families without `_created` samples, as prometheus_client's multiprocess
    collector writes them."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            family.samples = [s for s in family.samples if not s.name.endswith("_created")]
            yield family


class SglangMetrics:
    """One scheduler's and its tokenizer's series; a `StepObserver` of one `Engine`."""

    def __init__(self, model: str, context_len: int, num_draft_tokens: int) -> None:
        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self.spec = num_draft_tokens > 0
        sched = ("unified", model, "0", "0", "0")
        tok = ("unified", model)
        reg = self.registry

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, SCHEDULER, registry=reg).labels(*sched)

        self.running = gauge("sglang:num_running_reqs", "The number of running requests.")
        self.queued = Gauge(
            "sglang:num_queue_reqs", "The number of requests in the waiting queue.", registry=reg
        )
        self.throughput = gauge("sglang:gen_throughput", "The generation throughput (token/s).")
        self.usage = gauge("sglang:token_usage", "The token usage.")
        gauge("sglang:context_len", "Maximum context length.").set(context_len)
        realtime = Counter(
            "sglang:realtime_tokens",
            "Total number of tokens processed (updated on each log interval). "
            "mode: prefill_compute, prefill_cache, decode.",
            [*SCHEDULER, "mode"],
            registry=reg,
        )
        self.realtime = {
            m: realtime.labels(*sched, m) for m in ("prefill_compute", "prefill_cache", "decode")
        }
        self.accept_length = gauge(
            "sglang:spec_accept_length",
            "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
        )
        self.accept_rate = gauge(
            "sglang:spec_accept_rate",
            "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
        )
        steps = gauge("sglang:spec_num_steps", "Currently active speculative_num_steps.")
        width = gauge(
            "sglang:spec_num_draft_tokens",
            "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).",
        )
        steps.set(max(0, num_draft_tokens - 1))
        width.set(num_draft_tokens)
        self.active_steps, self.active_width = steps, width

        def by_stream(name: str, doc: str) -> Counter:
            return Counter(name, doc, [*TOKENIZER, "is_streaming"], registry=reg)

        self.prompt = by_stream("sglang:prompt_tokens", "Number of prefill tokens processed.")
        self.generated = by_stream("sglang:generation_tokens", "Number of generation tokens processed.")
        self.requests = by_stream("sglang:num_requests", "Number of requests processed.")
        self.verify = Counter(
            "sglang:spec_verify_calls",
            "Number of speculative decoding verification calls.",
            TOKENIZER,
            registry=reg,
        ).labels(*tok)
        self.ttft = Histogram(
            "sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            [*TOKENIZER, "is_streaming"], buckets=TTFT_BUCKETS, registry=reg,
        )  # fmt: skip
        self.itl = Histogram(
            "sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            TOKENIZER, buckets=ITL_BUCKETS, registry=reg,
        ).labels(*tok)  # fmt: skip
        self.e2e = Histogram(
            "sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds",
            [*TOKENIZER, "is_streaming"], buckets=E2E_BUCKETS, registry=reg,
        )  # fmt: skip
        self.tpot = Histogram(
            "sglang:request_time_per_output_token_seconds",
            "Per-request TPOT in seconds: (finished_time - first_token_time) / (completion_tokens - 1).",
            [*TOKENIZER, "is_streaming"], buckets=ITL_BUCKETS, registry=reg,
        )  # fmt: skip
        self.queue = Histogram(
            "sglang:queue_time_seconds", "Histogram of queueing time in seconds.",
            SCHEDULER, buckets=QUEUE_BUCKETS, registry=reg,
        ).labels(*sched)  # fmt: skip
        # created on a request's first cached token, as SGLang's labelled counter is (:2114-2134)
        self.cached = Counter(
            "sglang:cached_tokens", "Number of cached prompt tokens by source (device/host/storage).",
            [*TOKENIZER, "cache_source"], registry=reg,
        )  # fmt: skip
        self.aborted = Counter(
            "sglang:num_aborted_requests", "Number of requests aborted.", TOKENIZER, registry=reg
        ).labels(*tok)
        self._tok = tok
        self._decode_iterations = 0
        self._interval = [0, 0, 0, 0]  # decode tokens, forward passes, accept tokens, correct drafts
        self._proposed = 0
        self._t_last_log = time.monotonic()
        self.lifetime = [0, 0]  # accept tokens, forward passes: /v1/loads `speculative.accept_length`
        self.last_throughput = 0.0
        self.last_accept_rate = 0.0

    def _streaming(self, task: Task) -> str:
        return "true" if task.params.get("stream") is True else "false"

    def on_step(self, plan: StepPlan, now: float) -> None:
        with self._lock:
            decoding = step_decode = 0
            for task, drafted, accepted, committed in plan:
                if task.cancelled:
                    continue
                if task.n_decoded == 0:
                    self.realtime["prefill_compute"].inc(task.n_processed)
                    self.realtime["prefill_cache"].inc(task.n_cached)
                    self.queue.observe(task.t_start - task.t_submit)
                    self.ttft.labels(*self._tok, self._streaming(task)).observe(now - task.t_submit)
                    continue
                decoding += 1
                step_decode += committed
                self._interval[0] += committed
                for _ in range(committed):  # one observation per token: the chunk's gap shared out
                    self.itl.observe((now - task.t_gen_last) / committed)
                if self.spec:
                    self._interval[1] += 1
                    self._interval[2] += accepted + 1
                    self._interval[3] += accepted
                    self._proposed += drafted
            self.realtime["decode"].inc(step_decode)
            if decoding:
                self._decode_iterations += 1
                if self._decode_iterations % DECODE_LOG_INTERVAL == 0:
                    self._log(now, sum(1 for t, *_ in plan if not t.cancelled))

    def _log(self, now: float, running: int) -> None:
        """`report_decode_stats`' periodic work: the gauges over the last interval."""
        tokens, forwards, accept_tokens, correct = self._interval
        self.last_throughput = tokens / max(1e-9, now - self._t_last_log)
        self._t_last_log = now
        self.throughput.set(self.last_throughput)
        self.running.set(running)
        if self.spec and forwards:
            self.accept_length.set(accept_tokens / forwards)
            self.last_accept_rate = correct / self._proposed if self._proposed else 0.0
            self.accept_rate.set(self.last_accept_rate)
            self.lifetime[0] += accept_tokens
            self.lifetime[1] += forwards
        self._interval = [0, 0, 0, 0]
        self._proposed = 0

    def on_finish(self, task: Task, stop_type: str) -> None:
        streaming = self._streaming(task)
        with self._lock:
            self.requests.labels(*self._tok, streaming).inc()
            self.prompt.labels(*self._tok, streaming).inc(task.n_prompt)
            self.generated.labels(*self._tok, streaming).inc(task.n_decoded)
            if self.spec and task.n_decoded > 1:
                self.verify.inc(task.n_decoded - 1 - task.draft_accepted)  # one verify per decode step
            if task.n_cached:
                self.cached.labels(*self._tok, "device").inc(task.n_cached)
            if stop_type == "none":  # the client went away: SGLang counts the abort it sends
                self.aborted.inc()
            if task.n_decoded:
                self.e2e.labels(*self._tok, streaming).observe(task.t_gen_last - task.t_submit)
            # TPOT for stop and length finishes only (tokenizer_manager.py:3279-3284)
            if task.n_decoded > 1 and stop_type != "none":
                tpot_s = (task.t_gen_last - task.t_prompt_done) / (task.n_decoded - 1)
                self.tpot.labels(*self._tok, streaming).observe(tpot_s)

    def page(self, queued: int, token_usage: float, active_steps: int | None = None) -> bytes:
        """The page; `active_steps`: an adaptive server's current draft steps (topk 1: width
        steps + 1), which its gauges follow (metrics_reporter.py:1016-1020)."""
        with self._lock:
            if active_steps is not None:
                self.active_steps.set(active_steps)
                self.active_width.set(active_steps + 1)
            self.queued.set(queued)
            self.usage.set(token_usage)
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_NoCreated(self.registry))
            return generate_latest(registry)

    def lifetime_accept_length(self) -> float:
        with self._lock:
            return self.lifetime[0] / self.lifetime[1] if self.lifetime[1] else 0.0
