"""A simulated vLLM with data parallelism: `--data-parallel-size N`, so N API servers (vLLM 0.33).

What vLLM does (vllm-0.33.0 wheel) and the simulator copies:
- `--data-parallel-size N` defaults `--api-server-count` to N (`entrypoints/cli/serve.py:107-120`);
  with more than one API server the page is prometheus_client's multiprocess merge
  (`v1/metrics/prometheus.py:39-53`): counters and histograms summed over the API servers' files,
  no `*_created` samples, no `process_*` series; the scheduler gauges are
  `multiprocess_mode="mostrecent"` (`v1/metrics/loggers.py:528-622`): one value per engine, no `pid`.
- Each series carries its engine's index (`engine="0"`, `"1"`, ...), and each engine runs
  `max_num_seqs` requests (the simulator's slots split evenly over the engines).
- An engine step's outputs go to every API server with a request in it, and each of those
  observes `vllm:iteration_tokens_total` once, with its own requests' tokens
  (`v1/engine/async_llm.py:883-885`, `loggers.py:1273-1276`): a step is counted once per API
  server that had a request in it.
The simulator's one `Engine` steps all requests together, so a step is one step of every engine.
Which engine and API server a request lands on: request ids round-robin over API servers, then
over engines (`task.id % api_servers`, `(task.id // api_servers) % engines`), so every API
server has requests on every engine once 2 × engines requests run. Waiting requests are spread
evenly over the engines (the engine does not say which queue they wait in).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

from collectors.simulator.tasks import StepPlan, Task
from collectors.simulator.vllm_metrics import VllmMetrics

if TYPE_CHECKING:
    from collectors.simulator.engine import Engine

GAUGE_SOURCE_API = 0  # the API server whose gauge writes are the newest (`mostrecent` keeps one)


class VllmDpMetrics:
    """`engines` × `api_servers` single-process registries, merged into one multiprocess page."""

    def __init__(
        self,
        model: str,
        max_model_len: int,
        num_speculative_tokens: int,
        engines: int,
        api_servers: int,
        per_request_spec: str = "none",
    ) -> None:
        self.engines, self.api_servers = engines, api_servers
        self.engine_steps = 0  # the simulator's own counts, for tests: steps of each engine
        self.decode_request_steps = 0  # (request, step) pairs after each request's first token
        self.parts = {
            (api, e): VllmMetrics(model, max_model_len, num_speculative_tokens, e, per_request_spec)
            for api in range(api_servers)
            for e in range(engines)
        }

    def api_of(self, task_id: int) -> int:
        return task_id % self.api_servers

    def engine_of(self, task_id: int) -> int:
        return (task_id // self.api_servers) % self.engines

    def on_step(self, plan: StepPlan, now: float) -> None:
        by_part: dict[tuple[int, int], StepPlan] = {}
        for row in plan:
            by_part.setdefault((self.api_of(row[0].id), self.engine_of(row[0].id)), []).append(row)
        self.engine_steps += len({e for _, e in by_part})
        self.decode_request_steps += sum(1 for row in plan if row[0].n_decoded and not row[0].cancelled)
        for key, rows in by_part.items():
            self.parts[key].on_step(rows, now)  # one iteration observation per API server and engine

    def on_finish(self, task: Task, stop_type: str) -> None:
        self.parts[(self.api_of(task.id), self.engine_of(task.id))].on_finish(task, stop_type)

    def request_spec(self, task_id: int) -> dict[str, object] | None:
        return self.parts[(self.api_of(task_id), self.engine_of(task_id))].request_spec(task_id)

    def render(self, engine: Engine) -> bytes:
        slots_per_engine = engine.n_slots // self.engines
        running, used = [0] * self.engines, [0] * self.engines
        for view in engine.slots():
            if view.is_processing and view.id_task is not None:
                e = self.engine_of(view.id_task)
                running[e] += 1
                used[e] += view.n_prompt_tokens
        deferred = engine.live().deferred
        for e in range(self.engines):
            waiting = deferred // self.engines + (1 if e < deferred % self.engines else 0)
            kv = used[e] / (slots_per_engine * engine.n_ctx)
            self.parts[(GAUGE_SOURCE_API, e)].set_gauges(running[e], waiting, kv)
        registry = CollectorRegistry()
        registry.register(_Merged(self))
        return generate_latest(registry)


class _Merged:
    """What MultiProcessCollector renders from the API servers' files (prometheus_client
    `multiprocess.py` `_accumulate_metrics`): counters and histograms summed, gauges the newest."""

    def __init__(self, dp: VllmDpMetrics) -> None:
        self._dp = dp

    def collect(self) -> Iterator[Metric]:
        merged: dict[str, Metric] = {}
        values: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
        for (api, _), part in self._dp.parts.items():
            for family in part.registry.collect():
                out = merged.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                acc = values.setdefault(family.name, {})
                for sample in family.samples:
                    if sample.name.endswith("_created"):
                        continue  # the multiprocess files keep no creation stamps
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    if family.type == "gauge":
                        if api == GAUGE_SOURCE_API:
                            acc[key] = sample.value
                    else:
                        acc[key] = acc.get(key, 0.0) + sample.value
        for name, out in merged.items():
            for (sample_name, labels), value in values[name].items():
                out.add_sample(sample_name, dict(labels), value)
            yield out
